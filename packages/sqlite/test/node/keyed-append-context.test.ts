import type { SessionMessage } from "@contextblocks/sessions";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

const opened: TemporaryDatabase[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.remove();
});

function keyedDatabase(): TemporaryDatabase {
  const database = openTemporaryDatabase();
  opened.push(database);
  return database;
}

const keyed = (database: Database.Database, sessionId = "chat") =>
  sqliteTree(database, { sessionId, newDatabaseLayout: "keyed" });

function message(id: string, text: string, role: "user" | "assistant" = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/**
 * Every message's search row against what its ancestors' rows say it should hold (what a row written by
 * reading them holds): its parent's and grandparent's rowids, and their texts as its context.
 */
function contextMismatches(database: Database.Database): unknown[] {
  return database
    .prepare(`SELECT f.id, f.parent_row, f.grandparent_row, f.context, p.seq AS expected_parent_row,
        g.seq AS expected_grandparent_row,
        coalesce(pf.content, '') || char(10) || coalesce(gf.content, '') AS expected_context
      FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.seq = f.rowid
      LEFT JOIN assistant_messages p ON p.id = m.parent_id AND p.session_id = m.session_id
      LEFT JOIN assistant_fts pf ON pf.rowid = p.seq
      LEFT JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
      LEFT JOIN assistant_fts gf ON gf.rowid = g.seq
      WHERE f.parent_row IS NOT p.seq OR f.grandparent_row IS NOT g.seq
        OR f.context IS NOT coalesce(pf.content, '') || char(10) || coalesce(gf.content, '')`)
    .all();
}

describe("the keyed layout's append, its context carried in memory", () => {
  it("writes each search row with the context its ancestors' rows give, over chains, branches, roots, updates and deletes", async () => {
    const { database } = keyedDatabase();
    const store = keyed(database);
    await store.appendMessage(message("a", "the lighthouse keeper"));
    await store.appendMessage(message("b", "keeps a cat", "assistant"));
    await store.appendChain([message("c", "what is its name"), message("d", "Tide", "assistant")], undefined);
    await store.appendChain(
      [message("e", "and the boat?"), message("f", "the Gull", "assistant"), message("g", "thanks")],
      undefined,
    );
    // A branch under an older message, a new root, then the latest leaf again.
    await store.appendMessage(message("b2", "a branch"), "a");
    await store.appendMessage(message("r", "a new root"), null);
    await store.appendMessage(message("r2", "under the root", "assistant"));
    // An update of the leaf and of its parent: the next append's context takes the new texts.
    await store.updateMessage(message("r2", "under the new root, edited", "assistant"));
    await store.updateMessage(message("r", "an edited root"));
    await store.appendMessage(message("r3", "after the edits"));
    // Another session's messages in between.
    await keyed(database, "other").appendMessage(message("o1", "elsewhere"));
    await store.appendMessage(message("r4", "after another session"));
    await store.deleteMessages(["r4"]);
    await store.appendMessage(message("r5", "after a delete"));
    expect(contextMismatches(database)).toEqual([]);
    expect(ids(await store.getHistory())).toEqual(["r", "r2", "r3", "r5"]);
    const r3 = database.prepare("SELECT context FROM assistant_fts WHERE id = 'r3'").get() as {
      context: string;
    };
    expect(r3.context).toBe("under the new root, edited\nan edited root");
  });

  it("a leaf deleted by another writer, whose next append took its rowid back, is noticed: no message goes under it", async () => {
    const temporary = keyedDatabase();
    const first = keyed(temporary.database);
    const second = keyed(temporary.connect());
    await first.appendMessage(message("a", "one"));
    await first.appendMessage(message("b", "two"));
    // The second writer deletes the first's leaf and appends in its place.
    await second.deleteMessages(["b"]);
    await second.appendMessage(message("x", "the other writer's"));
    await first.appendMessage(message("c", "three"));
    expect(ids(await first.getHistory())).toEqual(["a", "x", "c"]);
    expect(ids(await second.getHistory())).toEqual(["a", "x", "c"]);
    expect(contextMismatches(temporary.database)).toEqual([]);
    // The same after a whole session is cleared by the other writer.
    await second.clearMessages();
    await second.appendMessage(message("y", "a fresh start"));
    await first.appendMessage(message("z", "after the clear"));
    expect(ids(await first.getHistory())).toEqual(["y", "z"]);
    expect(await first.getPathLength()).toBe(2);
    // A search finds the messages, and never a blank row the deletes left.
    expect(ids(await first.searchMessages("fresh start", 10))).toEqual(["y"]);
  });
});
