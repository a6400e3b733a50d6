import { fromBetterSqlite3 } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catchUpMessageIndex } from "../../src/message-index.js";
import { searchMessageIndex } from "../../src/message-search.js";
import { KbnSum } from "../../src/search-in-steps.js";
import { SessionShare } from "../../src/session-share.js";
import { sqliteTree } from "../sqlite-tree.js";

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

/** `copies` of a three-turn chat about a lake in session "chat", each copy a day of its own when `days`. */
async function lakeChat(copies: number, days: boolean): Promise<void> {
  const tree = sqliteTree(temporary.database, "chat");
  const turns = ["Caroline: the lake trip", "Melanie: which lake?", "Caroline: the lake by the mountains"];
  for (let copy = 0; copy < copies; copy++) {
    for (const [index, text] of turns.entries()) {
      await tree.appendMessage({
        id: `m-${copy}-${index}`,
        role: index % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text }],
        ...(days ? { createdAt: new Date(Date.UTC(2023, 4, 8 + copy)) } : {}),
      });
    }
  }
}

describe("a search where FTS5 sorts, in steps", () => {
  it("adds up as SQLite's sum() does, to the last bit", () => {
    const database = new Database(":memory:");
    database.exec("CREATE TABLE addends (position INTEGER PRIMARY KEY, value REAL NOT NULL)");
    const insert = database.prepare("INSERT INTO addends (position, value) VALUES (?, ?)");
    const total = database.prepare("SELECT sum(value) AS total FROM addends");
    // bm25 scores and their shares: small negative numbers of mixed magnitude, and some extreme ones.
    const addend = fc.oneof(
      fc.double({ min: -50, max: 0, noNaN: true }),
      fc.double({ min: -1e-6, max: 1e-6, noNaN: true }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    fc.assert(
      fc.property(fc.array(addend, { minLength: 1, maxLength: 6 }), (values) => {
        database.exec("DELETE FROM addends");
        for (const [position, value] of values.entries()) insert.run(position, value);
        const sum = new KbnSum();
        for (const value of values) sum.add(value);
        expect(sum.value()).toBe((total.get() as { total: number }).total);
      }),
      { numRuns: 2_000 },
    );
  });

  it("a candidate whose message is gone is no candidate: the next one takes its place", async () => {
    // One day: the gone message's day share is every candidate's, so the others keep their order.
    await lakeChat(6, false);
    const client = fromBetterSqlite3(temporary.database);
    await catchUpMessageIndex(client);
    const billed = { ...client, billsRows: true };
    const before = await searchMessageIndex(billed, "lake", { limit: 5, sessionId: "chat" });
    const best = before[0]?.id as string;
    // Another writer removed the best match's message and left its search row.
    temporary.database.prepare("DELETE FROM assistant_messages WHERE id = ?").run(best);
    const stepwise = await searchMessageIndex(billed, "lake", { limit: 5, sessionId: "chat" });
    // Dropped before the cut (as a join of the messages before it would): still five, every one a message.
    expect(stepwise.map((candidate) => candidate.id)).not.toContain(best);
    expect(stepwise).toHaveLength(5);
    const stored = temporary.database.prepare("SELECT 1 FROM assistant_messages WHERE id = ?");
    for (const candidate of stepwise) expect(stored.get(candidate.id)).toBeDefined();
    expect(stepwise.map((candidate) => candidate.id)).toEqual(
      before
        .map((candidate) => candidate.id)
        .filter((id) => id !== best)
        .concat(stepwise.map((candidate) => candidate.id).filter((id) => !before.some((c) => c.id === id))),
    );
  });

  it("search rows another writer spoiled lend to no row and break nothing: the same hits as the one statement", async () => {
    await lakeChat(4, false);
    const client = fromBetterSqlite3(temporary.database);
    await catchUpMessageIndex(client);
    // The turns they point to as parent or grandparent: text, a negative rowid, one past 2^53, one not there.
    const spoil = temporary.database.prepare(
      "UPDATE assistant_fts SET parent_row = ?, grandparent_row = ? WHERE rowid = ?",
    );
    const rowids = (
      temporary.database.prepare("SELECT rowid FROM assistant_fts ORDER BY rowid").all() as {
        rowid: number;
      }[]
    ).map((row) => row.rowid);
    spoil.run("x", "y", rowids[2]);
    spoil.run(-7, null, rowids[5]);
    spoil.run(null, 9007199254740993n, rowids[8]);
    spoil.run(999_999, 999_998, rowids[11]);
    const stepwise = await searchMessageIndex({ ...client, billsRows: true }, "lake trip", {
      limit: 8,
      sessionId: "chat",
    });
    const oneStatement = await searchMessageIndex(client, "lake trip", {
      limit: 8,
      sessionId: "chat",
      sort: "bm25",
      share: new SessionShare(),
    });
    expect(stepwise.length).toBeGreaterThan(0);
    expect(stepwise).toEqual(oneStatement);
  });
});
