import { checkCompactionAcrossSessions } from "@contextblocks/conformance";
import { estimateMessageTokens, Session, type SessionMessage } from "@contextblocks/sessions";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => temporary?.remove());

function text(id: string, words: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text: words }] };
}

/** The tables as agents@0.22.0 created them: rows it writes carry no token stamp. */
const agentsTables = `CREATE TABLE assistant_messages (id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id);
CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id);`;

describe("per-message token stamps on SqliteSessionStore (better-sqlite3)", () => {
  it("a new Session per turn compacts a tool-heavy history at the same turns as one long-lived Session", async () => {
    temporary = openTemporaryDatabase();
    const database = temporary.database;
    const result = await checkCompactionAcrossSessions(
      (sessionId, settings) =>
        new Session({
          store: sqliteTree(database, sessionId),
          compaction: settings.compaction as never,
          threshold: settings.threshold,
        }),
    );
    expect(result.perRequest.length).toBeGreaterThan(0);
  });

  it("rows an older writer made (no stamp) are estimated from their content, on the indexed and lean layouts", async () => {
    for (const layout of ["indexed", "lean"] as const) {
      temporary?.remove();
      temporary = openTemporaryDatabase();
      const database = temporary.database;
      if (layout === "indexed") database.exec(agentsTables);
      // agents@0.22.0 cannot write to a keyed table (its insert has no `seq`): a lean one is made explicitly.
      const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
      await store.appendMessage(text("a", "the first message, stamped"));
      // An older writer (agents@0.22.0) adds two rows under it without a stamp.
      const insert = database.prepare(
        "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES (?, 'chat', ?, 'user', ?)",
      );
      insert.run("b", "a", JSON.stringify(text("b", "written by another writer, with no stamp at all")));
      insert.run("c", "b", JSON.stringify(text("c", "and one more of those")));
      const fresh = sqliteTree(database, "chat");
      const history = await fresh.getHistory();
      expect(history.map((message) => message.id)).toEqual(["a", "b", "c"]);
      expect(await fresh.getPathTokens()).toBe(estimateMessageTokens(history));
      // Our next append stamps its row. The store estimates nothing (the message tree does): under rows
      // without a stamp the path total stays unknown, and a new tree sums the path, estimating those rows.
      await fresh.appendMessage(text("d", "stamped again"));
      const stamped = database
        .prepare("SELECT tokens, path_tokens FROM assistant_messages WHERE id = 'd'")
        .get() as {
        tokens: number;
        path_tokens: number | null;
      };
      expect(stamped.tokens).toBe(estimateMessageTokens([text("d", "stamped again")]));
      expect(stamped.path_tokens).toBeNull();
      expect(await sqliteTree(database, "chat").getPathTokens()).toBe(
        estimateMessageTokens(await fresh.getHistory()),
      );
    }
  });

  it("an update or a delete above the leaf keeps the path total right (cleared below, summed again)", async () => {
    temporary = openTemporaryDatabase();
    const store = sqliteTree(temporary.database, "chat");
    for (const id of ["a", "b", "c", "d"]) await store.appendMessage(text(id, `message ${id}`));
    await store.updateMessage(text("b", "message b, now much longer than it was before the update"));
    const other = sqliteTree(temporary.database, "chat");
    expect(await other.getPathTokens()).toBe(estimateMessageTokens(await other.getHistory()));
    await store.appendMessage(text("e", "after the update"));
    expect(await other.getPathTokens()).toBe(estimateMessageTokens(await other.getHistory()));
    await store.addCompaction("a and b", "a", "b");
    expect(await other.getPathTokens()).toBe(estimateMessageTokens(await other.getHistory()));
    await store.deleteMessages(["c"]);
    expect(await other.getPathTokens()).toBe(estimateMessageTokens(await other.getHistory()));
  });
});
