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

  it("only the best matches by their own score lend: weak replies below the pool lift nothing", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    // Four short turns that hold the word: the best matches.
    for (const index of [1, 2, 3, 4]) {
      await store.appendMessage(message(`strong-${index}`, `Lighthouse ${index}.`), null);
    }
    // A turn without the word, answered on six branches by long turns that hold it once: each a weak match,
    // and together they would lend their parent more than any strong match scores.
    await store.appendMessage(message("asked", "Guess where I went."), null);
    const filler =
      "we walked along the cliffs and the beach for hours, talking about the old days and the sea";
    for (const index of [1, 2, 3, 4, 5, 6]) {
      await store.appendMessage(
        message(`weak-${index}`, `${filler}, then the lighthouse (${index}).`),
        "asked",
      );
    }
    const search = (extraCandidates: number) =>
      searchMessageRows((statement) => fromPg(client).run(statement), "lighthouse", 3, "chat", {
        ...defaultSearchRanking,
        extraCandidates,
      });
    // A pool deep enough to hold every match: the six replies lend "asked" its place among the best.
    expect((await search(20)).map((row) => row.id)).toContain("asked");
    // A pool of the three asked for and one more: the strong matches fill it, and no reply lends.
    const shallow = await search(1);
    expect(shallow.map((row) => row.id)).not.toContain("asked");
    expect(shallow.map((row) => row.id).every((id) => id.startsWith("strong-"))).toBe(true);
  });
});
