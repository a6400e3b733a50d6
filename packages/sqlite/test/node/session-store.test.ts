import { isContextError } from "@contextblocks/core";
import type { SessionMessage } from "@contextblocks/sessions";
import { fromBetterSqlite3, type StatementReport } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text = `text of ${id}`, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

describe("SqliteSessionStore: the message tree", () => {
  it("auto-parents to the latest leaf and reads root to leaf", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (const id of ["a", "b", "c"]) await provider.appendMessage(message(id));
    expect(ids(await provider.getHistory())).toEqual(["a", "b", "c"]);
    expect(await provider.getPathLength()).toBe(3);
    expect((await provider.getLatestLeaf())?.id).toBe("c");
    expect((await provider.getMessage("b"))?.parts).toEqual([{ type: "text", text: "text of b" }]);
  });

  it("branches: a second child of a message, history per leaf, branches oldest first", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (const id of ["q", "answer-1"]) await provider.appendMessage(message(id));
    await provider.appendMessage(message("answer-2"), "q");
    await provider.appendMessage(message("follow-up"));
    expect(ids(await provider.getBranches("q"))).toEqual(["answer-1", "answer-2"]);
    expect(ids(await provider.getHistory())).toEqual(["q", "answer-2", "follow-up"]);
    expect(ids(await provider.getHistory("answer-1"))).toEqual(["q", "answer-1"]);
    expect(await provider.getPathLength("answer-1")).toBe(2);
    expect(await provider.getPathLength()).toBe(3);
    await provider.appendMessage(message("root-2"), null);
    expect(ids(await provider.getHistory())).toEqual(["root-2"]);
  });

  it("refuses an existing id, a missing parent, its own parent and a non-message, storing nothing", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    await provider.appendMessage(message("a"));
    const refusals: [unknown, string | null | undefined, string, RegExp][] = [
      [message("a", "again"), undefined, "INVALID_INPUT", /already exists/],
      [message("b"), "missing", "NOT_FOUND", /parent "missing"/],
      [message("c"), "c", "INVALID_INPUT", /own parent/],
      [{ id: "d", role: "user" }, undefined, "INVALID_INPUT", /parts/],
      [{ id: "", role: "user", parts: [] }, undefined, "INVALID_INPUT", /id must be/],
      ["hello", undefined, "INVALID_INPUT", /not a SessionMessage/],
      [{ id: "e", role: "user", parts: [{ text: "no type" }] }, undefined, "INVALID_INPUT", /part 0/],
    ];
    for (const [value, parent, code, text] of refusals) {
      const error = await provider
        .appendMessage(value as SessionMessage, parent)
        .catch((caught: unknown) => caught);
      expect(isContextError(error), String(error)).toBe(true);
      expect((error as { code: string }).code).toBe(code);
      expect(String((error as Error).message)).toMatch(text);
    }
    expect(ids(await provider.getHistory())).toEqual(["a"]);
    expect((await provider.getMessage("a"))?.parts[0]?.text).toBe("text of a");
    const count = temporary.database.prepare("SELECT COUNT(*) AS count FROM assistant_messages").get() as {
      count: number;
    };
    expect(count.count).toBe(1);
  });

  it("keeps sessions apart in the same tables", async () => {
    const first = sqliteTree(temporary.database, "one");
    const second = sqliteTree(temporary.database, "two");
    await first.appendMessage(message("1a", "apples"));
    await second.appendMessage(message("2a", "apples"));
    expect(ids(await first.getHistory())).toEqual(["1a"]);
    expect(ids(await second.getHistory())).toEqual(["2a"]);
    expect(await first.getMessage("2a")).toBeNull();
    expect(ids(await first.searchMessages("apples"))).toEqual(["1a"]);
    await first.clearMessages();
    expect(ids(await second.getHistory())).toEqual(["2a"]);
    expect(ids(await second.searchMessages("apples"))).toEqual(["2a"]);
  });

  it("returns a message's parent and the tree in storage order (what an inspector draws)", async () => {
    const store = sqliteTree(temporary.database, "chat");
    for (const id of ["q", "a1"]) await store.appendMessage(message(id));
    await store.appendMessage(message("a2", "other", "assistant"), "q");
    await sqliteTree(temporary.database, "other").appendMessage(message("o1"));
    expect(await store.getNode("a2")).toMatchObject({ id: "a2", parentId: "q", role: "assistant" });
    expect(typeof (await store.getNode("a2"))?.createdAt).toBe("string");
    expect(await store.getNode("q")).toMatchObject({ parentId: null });
    expect(await store.getNode("o1")).toBeNull();
    expect((await store.getTree()).map((node) => [node.id, node.parentId])).toEqual([
      ["q", null],
      ["a1", "q"],
      ["a2", "q"],
    ]);
    expect(await store.getTree({ limit: 2 })).toHaveLength(2);
  });

  it("chains concurrent appends instead of forking them", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    await Promise.all(Array.from({ length: 20 }, (_, index) => provider.appendMessage(message(`m${index}`))));
    const history = await provider.getHistory();
    expect(history).toHaveLength(20);
    expect(await provider.getPathLength()).toBe(20);
  });

  it("survives a reopen of the database file", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (const id of ["a", "b"]) await provider.appendMessage(message(id));
    await provider.addCompaction("summary of a", "a", "a");
    const reopened = sqliteTree(temporary.reopen(), "chat");
    expect(ids(await reopened.getHistory())).toEqual([
      `compaction_${(await reopened.getCompactions())[0]?.id}`,
      "b",
    ]);
    await reopened.appendMessage(message("c"));
    expect(await reopened.getPathLength()).toBe(3);
  });

  it("updates content in place and re-indexes it; deletes messages and their index rows", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (const id of ["a", "b", "c"]) await provider.appendMessage(message(id, `${id} mentions zebras`));
    await provider.updateMessage(message("b", "b mentions giraffes"));
    expect(ids(await provider.searchMessages("zebras"))).toEqual(expect.arrayContaining(["a", "c"]));
    // "a" precedes "b" and "c" follows it: both found through their context, shown beside "b".
    const giraffes = await provider.searchMessages("giraffes");
    expect(ids(giraffes)).toEqual(["b"]);
    expect(giraffes[0]?.context?.map((turn) => turn.id).sort()).toEqual(["a", "c"]);
    await provider.deleteMessages(["c"]);
    expect(ids(await provider.getHistory())).toEqual(["a", "b"]);
    // "c" is gone; "b" is found through "a" before it, shown beside it.
    const zebras = await provider.searchMessages("zebras");
    expect(zebras.map((hit) => [hit.id, hit.context?.map((turn) => turn.id)])).toEqual([["a", ["b"]]]);
    const error = await provider.updateMessage(message("nope")).catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe("NOT_FOUND");
  });

  it("applies overlays on read without touching stored messages", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (const id of ["a", "b", "c", "d"]) await provider.appendMessage(message(id));
    const overlay = await provider.addCompaction("b and c, briefly", "b", "c");
    const history = await provider.getHistory();
    expect(ids(history)).toEqual(["a", `compaction_${overlay.id}`, "d"]);
    expect(history[1]?.parts[0]?.text).toBe("b and c, briefly");
    expect(await provider.getPathLength()).toBe(4);
    expect(ids(await provider.getHistory("b"))).toEqual(["a", "b"]);
    const wider = await provider.addCompaction("b to d", "b", "d");
    expect(ids(await provider.getHistory())).toEqual(["a", `compaction_${wider.id}`]);
  });

  it("reads a byte-budgeted window of the newest messages", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    for (let index = 0; index < 50; index++)
      await provider.appendMessage(message(`m${index}`, "x".repeat(100)));
    const size = Buffer.byteLength(JSON.stringify(message("m10", "x".repeat(100))));
    const window = await provider.getRecentHistory(null, size * 5, 1);
    expect(ids(window.messages)).toEqual(["m45", "m46", "m47", "m48", "m49"]);
    expect(window.truncated).toBe(true);
    const floor = await provider.getRecentHistory(null, 0, 3);
    expect(ids(floor.messages)).toEqual(["m47", "m48", "m49"]);
    const all = await provider.getRecentHistory(null, 1e9, 1);
    expect(all.messages).toHaveLength(50);
    expect(all.truncated).toBe(false);
  });

  it("keeps hostile and large text exact, and searches it as words", async () => {
    const provider = sqliteTree(temporary.database, "chat");
    const hostile = `'); DROP TABLE assistant_messages; -- "NEAR" OR * ^ content: \u0000 ${"\u{1F600}"} \ud800`;
    await provider.appendMessage(message("h", hostile));
    const large = "word ".repeat(200_000);
    await provider.appendMessage(message("large", large));
    expect((await provider.getMessage("h"))?.parts[0]?.text).toBe(hostile);
    expect((await provider.getMessage("large"))?.parts[0]?.text).toBe(large);
    // "large" follows "h": found through its context, shown beside it (cut to the context's budget).
    const found = await provider.searchMessages('DROP TABLE "NEAR" OR *');
    expect(ids(found)).toEqual(["h"]);
    expect(found[0]?.context?.map((turn) => [turn.id, turn.text.length < 1_000])).toEqual([["large", true]]);
    expect(await provider.searchMessages("   ")).toEqual([]);
  });

  it("appends at constant cost: rows read per append do not grow with the session", async () => {
    const reports: StatementReport[] = [];
    const database = new Database(":memory:");
    const client = fromBetterSqlite3(database, { onStatement: (report) => reports.push(report) });
    const provider = sqliteTree(client, "chat");
    const statementsPerAppend: number[] = [];
    for (let index = 0; index < 300; index++) {
      reports.length = 0;
      await provider.appendMessage(message(`m${index}`));
      statementsPerAppend.push(reports.length);
    }
    // After the first append (schema, first leaf) every append runs the same statements, but one in 8,
    // which also indexes the 8 messages appended since (rows cost only time here: the search's catch-up
    // stays bounded): the same few statements per message indexed, whatever the session's length (one
    // more where the index's mark moves).
    const counts = statementsPerAppend.slice(2);
    const plain = Math.min(...counts);
    const indexing = counts.filter((count) => count !== plain);
    expect(new Set(indexing).size).toBeLessThanOrEqual(2);
    expect(indexing.length).toBeLessThanOrEqual(Math.ceil(counts.length / 8));
    // Per message indexed: its old row replaced (by rowid) and its row written; and the reads around them.
    expect(Math.max(...indexing) - plain).toBeLessThanOrEqual(2 * 8 + 4);
    const plan = database
      .prepare(
        "EXPLAIN QUERY PLAN SELECT m.id FROM assistant_leaves l JOIN assistant_messages m ON m.id = l.leaf_id WHERE l.session_id = 'chat'",
      )
      .all() as { detail: string }[];
    expect(plan.map((row) => row.detail).join(" ")).not.toMatch(/SCAN m\b/);
    database.close();
  });
});
