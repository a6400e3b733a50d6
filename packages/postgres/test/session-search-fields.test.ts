import type { SessionMessage } from "@contextblocks/sessions";
import { datePatterns } from "@contextblocks/text";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree, type SearchableTree } from "./message-tree.js";

function message(id: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }], ...extra };
}

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

/** What a search shows: its hits and the turns beside them (near-matches come back as a hit's context). */
async function found(store: SearchableTree, query: string): Promise<string[]> {
  return (await store.searchMessages(query, 10))
    .flatMap((hit) => [hit.id, ...(hit.context ?? []).map((turn) => turn.id)])
    .sort();
}

describe("PostgresSessionStore search: the turns after a message, its day and its speaker", () => {
  it("finds a message by the day it carries, and returns its own text only", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(
      message("may", "We planted the tomatoes.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendMessage(
      message("june", "We picked the tomatoes.", { createdAt: new Date("2023-06-20T09:00:00Z") }),
    );
    const hits = await store.searchMessages("tomatoes in May 2023", 1);
    expect(hits.map((hit) => hit.id)).toEqual(["may"]);
    expect(hits[0]?.content).toBe("We planted the tomatoes.");
  });

  it("a question that asks when ranks first the turn whose words say when, in any case, at a word's start", async () => {
    const store = postgresTree(await schema.client(), "chat");
    // Each matching turn after two others, so none lends another a share of its score and all have the same
    // turns before them (the same length).
    const turns = [
      ["filler-a", "Nothing else happened."],
      ["filler-b", "Nothing else happened."],
      ["dated", "We saw the parade YESTERDAY."],
      ["filler-1", "Nothing else happened."],
      ["filler-2", "Nothing else happened."],
      ["chicago", "We saw the parade in Chicago."],
      ["filler-3", "Nothing else happened."],
      ["filler-4", "Nothing else happened."],
      ["newest", "We saw the parade in Toronto."],
    ];
    for (const [id, text] of turns) await store.appendMessage(message(String(id), String(text)));
    const ids = async (query: string) =>
      (await store.searchMessages(query, 10)).map((hit) => hit.id).filter((id) => !id.startsWith("filler"));
    // "ago" inside "Chicago" does not say when; ties go to the newest turn.
    expect(await ids("When was the parade?")).toEqual(["dated", "newest", "chicago"]);
    expect(await ids("Which parade?")).toEqual(["newest", "chicago", "dated"]);
  });

  it("reads datePatterns as lower-case words after a space (the statement matches them as one expression)", () => {
    for (const pattern of datePatterns) expect(pattern).toMatch(/^% [a-z]+( [a-z]+)*%$/);
  });

  it("ranks the turns of the speaker a query names first (a 'Name:' label, or metadata.speaker)", async () => {
    const store = postgresTree(await schema.client(), "chat");
    // Two turns of small talk between them, so none ranks through another's text (the turns around it).
    await store.appendMessage(message("c", "Caroline: I went hiking last weekend."));
    await store.appendMessage(message("c1", "Nice."));
    await store.appendMessage(message("c2", "Yes."));
    await store.appendMessage(message("m", "Melanie: I went hiking last weekend."));
    await store.appendMessage(message("m1", "Nice."));
    await store.appendMessage(message("m2", "Yes."));
    await store.appendMessage(
      message("x", "I went hiking last weekend.", { metadata: { speaker: "Xavier" } }),
    );
    expect((await store.searchMessages("Where did Melanie go hiking?", 3))[0]?.id).toBe("m");
    expect((await store.searchMessages("Where did Xavier go hiking?", 3))[0]?.id).toBe("x");
  });

  it("a turn's later answer joins its context at the next search; an update or delete of the answer follows", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    expect(await found(store, "agencies")).toEqual([]);
    await store.appendMessage(message("a", "Adoption agencies, mostly.", { role: "assistant" }));
    expect(await found(store, "agencies")).toEqual(["a", "q"]);
    await store.updateMessage(message("a", "Orchard soil, mostly.", { role: "assistant" }));
    expect(await found(store, "agencies")).toEqual([]);
    expect(await found(store, "orchard")).toEqual(["a", "q"]);
    await store.deleteMessages(["a"]);
    expect(await found(store, "orchard")).toEqual([]);
  });
});
