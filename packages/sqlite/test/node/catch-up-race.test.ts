import type { SessionMessage } from "@contextblocks/sessions";
import { toSqliteClient } from "@contextblocks/sql/store-kit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { catchUpSteps } from "../../src/message-index.js";
import { runStepsAtOnce, type SqlSteps } from "../../src/sql-steps.js";
import { sqliteTree } from "../sqlite-tree.js";

/**
 * The lazy index's catch-up reads the messages it indexes, then writes their search rows in one transaction:
 * a writer may change those messages in between (another connection, or a store of this process while the
 * catch-up awaits). The row written must never hold text the message no longer has, and the message must
 * still be found by its new text.
 */

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** Runs `steps` on `database`, calling `between` once, after the reads and before the first write. */
async function withWriterBetween<T>(
  database: Database.Database,
  steps: SqlSteps<T>,
  between: () => Promise<void>,
): Promise<T> {
  const client = toSqliteClient(database);
  let waited = false;
  let next = steps.next();
  while (next.done !== true) {
    const step = next.value;
    if ("group" in step && !waited) {
      waited = true;
      await between();
    }
    const answer = "statement" in step ? client.runSync?.(step.statement) : client.batchSync?.(step.group);
    next = steps.next(answer);
  }
  expect(waited).toBe(true);
  return next.value;
}

const ids = (hits: readonly { id: string }[]) => hits.map((hit) => hit.id).sort();

describe("a catch-up racing another writer (lean layout, better-sqlite3)", () => {
  for (const messages of [3, 70]) {
    it(`${messages} messages to index: an update or a delete and a new message in between are indexed as they are now`, async () => {
      const database = new Database(":memory:");
      const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
      for (let index = 0; index < messages; index++)
        await store.appendMessage(message(`m${index}`, `harbour note ${index}`));
      // The index as an upgrade from an earlier search table leaves it: every message to index again.
      database.exec("DELETE FROM assistant_fts; UPDATE assistant_fts_state SET indexed_rowid = 0");
      const last = `m${messages - 1}`;
      await withWriterBetween(database, catchUpSteps(toSqliteClient(database)), async () => {
        await store.updateMessage(message("m1", "lighthouse keeper"));
        // The newest message deleted: the next append takes its rowid.
        await store.deleteMessages([last]);
        await store.appendMessage(message("n1", "lighthouse beacon"));
      });
      expect(ids(await store.searchMessages("lighthouse", 10))).toEqual(["m1", "n1"]);
      // Every message has one search row, holding its text as it is now.
      const expected = Object.fromEntries(
        Array.from({ length: messages - 1 }, (_, index) => [`m${index}`, `harbour note ${index}`]),
      );
      Object.assign(expected, { m1: "lighthouse keeper", n1: "lighthouse beacon" });
      const rows = database.prepare("SELECT id, content FROM assistant_fts").all() as {
        id: string;
        content: string;
      }[];
      expect(rows).toHaveLength(messages);
      expect(Object.fromEntries(rows.map((row) => [row.id, row.content]))).toEqual(expected);
      database.close();
    });
  }

  it("an update that changes only a continuation slice of a message over one row is indexed as it is now", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
    // A tool's output of 1.6 MB first: the text part is in the message's continuation slice.
    const withOutput = (text: string) =>
      ({
        id: "big",
        role: "assistant",
        parts: [
          {
            type: "tool-read",
            toolCallId: "t1",
            state: "output-available",
            input: {},
            output: "o".repeat(1_600_000),
          },
          { type: "text", text },
        ],
      }) as SessionMessage;
    await store.appendMessage(withOutput("harbour"));
    database.exec("DELETE FROM assistant_fts; UPDATE assistant_fts_state SET indexed_rowid = 0");
    await withWriterBetween(database, catchUpSteps(toSqliteClient(database)), () =>
      store.updateMessage(withOutput("lighthouse")),
    );
    expect(database.prepare("SELECT content_chunks FROM assistant_messages").get()).toEqual({
      content_chunks: 1,
    });
    expect(ids(await store.searchMessages("lighthouse", 10))).toEqual(["big"]);
    expect(await store.searchMessages("harbour", 10)).toEqual([]);
    database.close();
  });

  it("a catch-up that meets no other writer writes what it read (at once, as a search answered at once runs it)", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
    for (let index = 0; index < 3; index++)
      await store.appendMessage(message(`m${index}`, `harbour ${index}`));
    database.exec("DELETE FROM assistant_fts; UPDATE assistant_fts_state SET indexed_rowid = 0");
    runStepsAtOnce(toSqliteClient(database), catchUpSteps(toSqliteClient(database)));
    expect(database.prepare("SELECT count(*) AS n FROM assistant_fts").get()).toEqual({ n: 3 });
    database.close();
  });
});
