import type { SessionMessage } from "@contextblocks/sessions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree, type SearchableTree } from "./message-tree.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
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

describe("PostgresSessionStore search: each message indexed with the turns around it on its branch", () => {
  it("finds the answer through the question before it, on its own branch only", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("z", "The zebra exhibit opens Friday."));
    await store.appendMessage(message("z-reply", "Lovely, I will go.", "assistant"));
    // A second branch under "a": its context is q and a, never the sibling branch's zebra turns.
    await store.appendMessage(message("other", "Something else entirely."), "a");
    await store.appendMessage(message("other-reply", "Right.", "assistant"));
    // "other" hangs under "a": its grandparent is the question.
    expect(await found(store, "researching")).toEqual(["a", "other", "q", "z"]);
    // The text returned is the message's own, never its context.
    const shown = await store.searchMessages("researching", 10);
    expect(shown.map((hit) => [hit.id, hit.content, hit.matchedBy])).toEqual([
      ["q", "What are you researching lately?", "text"],
    ]);
    expect(shown[0]?.context?.find((turn) => turn.id === "a")?.text).toBe("Adoption agencies, mostly.");
    // "z" is the first answer to "a": "a" and "q" have it among the turns after them (as on SQLite).
    expect(await found(store, "zebra")).toEqual(["a", "q", "z", "z-reply"]);
    // The second branch: its own turns and the one after it find it, and so do the turns it answers ("a",
    // "q": on its path), never the sibling branch's "z" and "z-reply" (as on SQLite).
    expect(await found(store, "else")).toEqual(["a", "other", "other-reply", "q"]);
  });

  it("an updated message's children and grandchildren are found by its new text, not its old one", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.appendMessage(message("c", "Thanks.", "assistant"));
    await store.updateMessage(message("q", "What are you painting lately?"));
    expect(await found(store, "researching")).toEqual([]);
    expect(await found(store, "painting")).toEqual(["a", "b", "q"]);
  });

  it("a deleted message is gone from its children's context too", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.deleteMessages(["q"]);
    expect(await found(store, "researching")).toEqual([]);
    expect(await found(store, "adoption")).toEqual(["a", "b"]);
  });

  it("turns under a compaction overlay stay searchable", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.addCompaction("They talked about work.", "q", "a");
    expect(await found(store, "researching")).toEqual(["a", "b", "q"]);
    expect(await found(store, "agencies")).toEqual(["a", "b", "q"]);
  });
});

describe("PostgresSessionStore search: a message's row is written once", () => {
  it("appending replies never rewrites an older message's row; the turns after it still find it", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Orchard soil, mostly.", "assistant"));
    await store.searchMessages("orchard", 10);
    // A row's version (xmin) changes whenever the row is written.
    const versions = async () =>
      (
        await client.query<{ id: string; xmin: string }>(
          "SELECT id, xmin::text AS xmin FROM assistant_messages WHERE session_id = 'chat' ORDER BY id",
        )
      ).rows;
    const before = await versions();
    await store.appendMessage(message("b", "Pruning the pear trees comes next."));
    await store.appendMessage(message("c", "Good luck with the pears.", "assistant"));
    // "q" is found through the reply two turns after it ("b": its grandchild), lent at query time.
    expect(await found(store, "pruning")).toEqual(["a", "b", "c", "q"]);
    const after = await versions();
    expect(after.filter((row) => row.id === "q" || row.id === "a")).toEqual(before);
  });
});
