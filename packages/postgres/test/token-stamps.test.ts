import { checkCompactionAcrossSessions } from "@contextblocks/conformance";
import { estimateMessageTokens, Session, type SessionMessage } from "@contextblocks/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";

function text(id: string, words: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text: words }] };
}

let schema: TestSchema;
beforeAll(async () => {
  schema = await createSchema();
});
afterAll(async () => {
  await schema.drop();
});

describe("per-message token stamps on PostgresSessionStore", () => {
  it("a new Session per turn (pg.Pool) compacts a tool-heavy history at the same turns as one long-lived Session", async () => {
    // The schema ends its pools when it is dropped.
    const pool = schema.pool();
    const result = await checkCompactionAcrossSessions(
      (sessionId, settings) =>
        new Session({
          store: new PostgresSessionStore(pool, sessionId),
          compaction: settings.compaction as never,
          threshold: settings.threshold,
        }),
    );
    expect(result.perRequest.length).toBeGreaterThan(0);
  });

  it("rows without a stamp (another writer's) are estimated from their content; the calibration is kept", async () => {
    const client = await schema.client();
    try {
      const store = postgresTree(client, "older");
      for (const id of ["a", "b", "c"]) await store.appendMessage(text(id, `message ${id} with some words`));
      // As agents' Postgres provider writes them: no stamp.
      await client.query(
        "UPDATE assistant_messages SET tokens = NULL WHERE session_id = 'older' AND id <> 'a'",
      );
      await store.addCompaction("a and b", "a", "b");
      await store.appendMessage(text("d", "after the overlay"));
      expect(await store.getPathTokens()).toBe(estimateMessageTokens(await store.getHistory()));
      const first = new Session({ store });
      await first.reportUsage({ inputTokens: 1_000 });
      expect(await store.getTokenCalibration()).toBeGreaterThan(0);
      // A new Session on the same database starts calibrated: its estimate is what the provider reported.
      const next = new Session({ store: new PostgresSessionStore(client, "older") });
      expect(Math.abs((await next.estimateTokens()) - 1_000)).toBeLessThanOrEqual(1);
    } finally {
      await client.end();
    }
  });
});
