import type { SessionMessage } from "@contextblocks/sessions";
import { defaultSearchRanking } from "@contextblocks/sessions/store-kit";
import { fromPg } from "@contextblocks/sql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchMessageRows } from "../src/message-search.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";

function message(id: string, text: string, speaker?: string): SessionMessage {
  return {
    id,
    role: "user",
    parts: [{ type: "text", text }],
    ...(speaker === undefined ? {} : { metadata: { speaker } }),
  };
}

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

// The statement reads a candidate's row once; a message that holds no query word but is lent a score by the
// turns after it is read apart, by key. Both must rank alike.
describe("PostgresSessionStore search: messages lent a score by the turns after them", () => {
  it("a message found only through its reply gets its speaker's boost, read from its own row", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("caroline", "I went there.", "Caroline"));
    await store.appendMessage(message("caroline-reply", "The lighthouse was beautiful."));
    // Two turns between, so neither "I went there." holds the other's reply among the turns before it.
    await store.appendMessage(message("between", "Unrelated words."));
    await store.appendMessage(message("between-2", "More unrelated chatter."));
    await store.appendMessage(message("melanie", "I went there.", "Melanie"));
    await store.appendMessage(message("melanie-reply", "The lighthouse was beautiful."));
    const rows = await searchMessageRows(
      (statement) => fromPg(client).run(statement),
      "Did Caroline like the lighthouse?",
      30,
      "chat",
    );
    const relevance = (id: string) => Number(rows.find((row) => row.id === id)?.relevance);
    const ownHit = (id: string) => Number(rows.find((row) => row.id === id)?.own_hit);
    // Neither holds a query word: both are lent a share of their reply's score, and nothing else.
    expect([ownHit("caroline"), ownHit("melanie")]).toEqual([0, 0]);
    expect(relevance("melanie")).toBeGreaterThan(0);
    // Each is lent `afterShare` of its reply's score; the one whose speaker the query names scores more.
    const { afterShare, speakerBoost } = defaultSearchRanking;
    expect(relevance("melanie") / relevance("melanie-reply")).toBeCloseTo(afterShare, 9);
    expect(relevance("caroline") / relevance("caroline-reply")).toBeCloseTo(
      afterShare * (1 + speakerBoost),
      9,
    );
  });

  it("a message with no text is lent nothing visible: it is never a row, while the turn before it is", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("question", "Where did you go?"));
    await store.appendMessage({ id: "tool", role: "assistant", parts: [] });
    await store.appendMessage(message("answer", "The lighthouse, it was beautiful."));
    const rows = await searchMessageRows(
      (statement) => fromPg(client).run(statement),
      "lighthouse",
      30,
      "chat",
    );
    const ids = rows.map((row) => row.id);
    expect(ids).toContain("answer");
    // "question" is the answer's grandparent, found through the text-less turn between them.
    expect(ids).toContain("question");
    expect(ids).not.toContain("tool");
  });
});
