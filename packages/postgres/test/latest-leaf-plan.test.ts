import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";
import { rowsHandled } from "./plan-nodes.js";
import { recordStatements } from "./recorded-statements.js";
import { genericPlanOf, longSessionLength, staleStatistics, writeLongSession } from "./stale-statistics.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

// Where the pointer to the latest leaf is gone (a delete took its message, or another writer made the rows),
// the newest message without a child is found by a scan of the session. On a table whose statistics lag behind
// it, Postgres made that an anti-join read as a nested loop: every message compared with every child (4.5
// million rows at 3,001 messages, 9 million handled in all). Each must stay a few passes over the session, whatever the plan.
describe("PostgresSessionStore latest leaf on a table Postgres has not analyzed since it grew", () => {
  it.each(staleStatistics)(
    "a delete of the leaf finds the next one without comparing every message with every child (%s)",
    async (_, analyzedAt) => {
      const client = await schema.client();
      const tree = postgresTree(client, "long");
      await writeLongSession(client, tree, analyzedAt);
      await tree.appendMessage(
        { id: "aside", role: "user", parts: [{ type: "text", text: "An aside." }] },
        "m10",
      );
      const sent = recordStatements(client);
      await tree.deleteMessages(["aside"]);
      expect((await tree.getLatestLeaf())?.id).toBe("m3000");
      const moved = sent.find((statement) => statement.text.includes("INSERT INTO assistant_leaves"));
      if (moved === undefined) throw new Error("the delete sent no statement moving the pointer");
      expect(rowsHandled(await genericPlanOf(client, moved))).toBeLessThan(20 * longSessionLength);
    },
  );

  it.each(staleStatistics)(
    "a history read without a pointer finds the leaf without comparing every message with every child (%s)",
    async (_, analyzedAt) => {
      const client = await schema.client();
      const tree = postgresTree(client, "long");
      await writeLongSession(client, tree, analyzedAt);
      await client.query("DELETE FROM assistant_leaves WHERE session_id = 'long'");
      const sent = recordStatements(client);
      const history = await tree.getHistory();
      expect(history.at(-1)?.id).toBe("m3000");
      const read = sent.find((statement) => statement.text.includes("pointed AS MATERIALIZED"));
      if (read === undefined) throw new Error("the history read sent no statement finding the leaf");
      // The path from that leaf is walked too: each of its messages a few times (about 30,000 rows in all).
      expect(rowsHandled(await genericPlanOf(client, read))).toBeLessThan(20 * longSessionLength);
    },
  );
});
