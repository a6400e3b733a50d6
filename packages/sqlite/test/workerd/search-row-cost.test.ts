import type { SessionMessage } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { markStride } from "../../src/message-index.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

const message = (index: number): SessionMessage => ({
  id: `m${index}`,
  role: index % 2 === 0 ? "user" : "assistant",
  parts: [
    { type: "text", text: `Caroline: message ${index}, the deploy on friday moved to ${index % 7} pm` },
  ],
  createdAt: new Date(Date.UTC(2023, 4, 8 + Math.floor(index / 10))),
});

/**
 * Rows a Durable Object bills for the search index (message-search.ts, message-index.ts): an append writes
 * no search row; the lazy indexer writes each message's row once, and never rewrites an older row (the turns
 * after a message count at query time), whatever the conversation's length. Printed for the bench figures.
 */
describe("search rows on a Durable Object", () => {
  it("a search after every append writes a bounded number of rows, the same at 20 and at 200 messages", async () => {
    await inObject("search-row-cost", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      // The lazy indexer of the lean layout (the keyed one writes each search row on append).
      const store = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "lean" });
      const written = () => reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0);
      const perStep: Record<string, { append: number; search: number }> = {};
      let next = 0;
      for (const length of [20, 200]) {
        while (next < length) await store.appendMessage(message(next++));
        await store.searchMessages("deploy friday", 10);
        let append = 0;
        let search = 0;
        const steps = 5;
        for (let step = 0; step < steps; step++) {
          reports.length = 0;
          await store.appendMessage(message(next++));
          append += written();
          reports.length = 0;
          await store.searchMessages("deploy friday", 10);
          search += written();
          // The search index statements are the only writes of a search, and no older row is rewritten.
          expect(
            reports.every((report) => (report.rowsWritten ?? 0) === 0 || /assistant_fts/.test(report.text)),
          ).toBe(true);
          expect(
            reports.filter(
              (report) => (report.rowsWritten ?? 0) > 0 && /UPDATE assistant_fts\b/.test(report.text),
            ),
          ).toEqual([]);
        }
        perStep[length] = { append: append / steps, search: search / steps };
      }
      // Ten appends, then one search: the batch writes ten rows and moves the indexer's mark.
      reports.length = 0;
      for (let step = 0; step < 10; step++) await store.appendMessage(message(next++));
      const appendOnly = written() / 10;
      reports.length = 0;
      await store.searchMessages("deploy friday", 10);
      const batched = written() / 10;
      console.log(
        `search rows written on a Durable Object, per append: append ${perStep[20]?.append} (20 messages) / ${perStep[200]?.append} (200); search after each append ${perStep[20]?.search} / ${perStep[200]?.search}; ten appends then one search: append ${appendOnly}, search ${batched} per message`,
      );
      // Constant in the conversation's length: the same rows at 200 messages as at 20.
      expect(perStep[200]?.search).toBe(perStep[20]?.search);
      // One search row per message; the indexer's mark moves once every `markStride` messages.
      expect(perStep[20]?.search).toBeLessThanOrEqual(1 + 1 / 5);
      expect(batched).toBeLessThanOrEqual(1 + 1 / 10);
      // A search after each of 150 appends: 150 search rows, and the mark at most once every 64 messages.
      reports.length = 0;
      let searchRows = 0;
      for (let step = 0; step < 150; step++) {
        await store.appendMessage(message(next++));
        reports.length = 0;
        await store.searchMessages("deploy friday", 10);
        searchRows += written();
      }
      expect(searchRows).toBeLessThanOrEqual(150 + Math.ceil(150 / markStride));
      expect(searchRows).toBeGreaterThanOrEqual(150);
    });
  }, 60_000);

  // The lean and indexed layouts write no search row with each append, but every 8th append of a client indexes
  // the 8 before it: the first search after many appends catches up on at most those, and reads and writes
  // what a search right after the last append would, however long the session grew unsearched.
  it.each(["lean", "indexed"] as const)(
    "the first search after 80 or 400 appends on the %s layout writes at most 8 search rows and reads as much at both lengths",
    async (layout) => {
      await inObject(`first-search-${layout}`, async (state) => {
        if (layout === "indexed") {
          // The tables as agents@0.22.0 created them: a database it wrote opens on the indexed layout.
          state.storage.sql.exec(`CREATE TABLE assistant_messages (id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP)`);
          state.storage.sql.exec("CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id)");
          state.storage.sql.exec("CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id)");
        }
        const reports: StatementReport[] = [];
        const client = fromDurableObjectStorage(state.storage, {
          onStatement: (report) => reports.push(report),
        });
        const store = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "lean" });
        const costs: Record<number, { read: number; written: number }> = {};
        let next = 0;
        for (const length of [80, 400]) {
          // Not a multiple of 8: the last appends are left for the search to index.
          while (next < length + 5) await store.appendMessage(message(next++));
          reports.length = 0;
          const hits = await store.searchMessages("deploy friday", 10);
          expect(hits).toHaveLength(10);
          costs[length] = {
            read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
            written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
          };
          // Every message is found: the newest (indexed by the search) and the first (by an append).
          expect(ids(await store.searchMessages(`message ${next - 1}`, 1))).toEqual([`m${next - 1}`]);
          expect(ids(await store.searchMessages("message 0", 1))).toEqual(["m0"]);
        }
        console.log(`first search after many appends, ${layout}: ${JSON.stringify(costs)}`);
        // The search rows of the appends since the last batch of 8, and now and then the indexer's mark.
        expect(costs[80]?.written).toBeLessThanOrEqual(8 + 1);
        expect(costs[400]?.written).toBeLessThanOrEqual(8 + 1);
        // Bounded by what is left to index and the candidates, not by the session's length.
        expect(costs[400]?.read).toBeLessThanOrEqual((costs[80]?.read ?? 0) + 80);
      });
    },
    120_000,
  );

  it("a store built for each request (its own client each time) still indexes every 8th append", async () => {
    await inObject("first-search-per-request", async (state) => {
      const reports: StatementReport[] = [];
      // A client with its own `onStatement` per request, as a Worker that counts each request's rows builds it.
      const storeOfRequest = () =>
        sqliteTree(
          fromDurableObjectStorage(state.storage, { onStatement: (report) => reports.push(report) }),
          { sessionId: "chat", newDatabaseLayout: "lean" },
        );
      for (let index = 0; index < 203; index++) await storeOfRequest().appendMessage(message(index));
      reports.length = 0;
      expect(await storeOfRequest().searchMessages("deploy friday", 10)).toHaveLength(10);
      const written = reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0);
      console.log(`first search after 203 appends, a store per request: ${written} rows written`);
      expect(written).toBeLessThanOrEqual(8 + 1);
    });
  }, 120_000);

  it("indexing the newest message reads a bounded number of rows, the same at 20 and at 200 messages", async () => {
    await inObject("search-read-cost", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      // The lazy indexer of the lean layout (the keyed one writes each search row on append).
      const store = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "lean" });
      const read = () => reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
      const perLength: Record<number, number> = {};
      let next = 0;
      for (const length of [20, 200]) {
        while (next < length) await store.appendMessage(message(next++));
        // A query no message matches: what the search reads is the indexer catching up.
        await store.searchMessages("zebra", 10);
        await store.appendMessage(message(next++));
        reports.length = 0;
        await store.searchMessages("zebra", 10);
        perLength[length] = read();
      }
      console.log(
        `rows read indexing one new message: ${perLength[20]} (20 messages) / ${perLength[200]} (200)`,
      );
      // A new database keeps no parent index: finding a message's children must not scan the conversation.
      expect(perLength[200]).toBeLessThanOrEqual((perLength[20] ?? 0) + 5);
    });
  }, 60_000);

  it("a search where every message matches reads the same rows at 100 and at 400 messages, a few hundred", async () => {
    await inObject("search-read-bound", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      // The keyed layout (a Durable Object's default) writes each search row on append: a search only reads.
      const store = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "keyed" });
      const read = () => reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
      const perLength: Record<number, number> = {};
      let next = 0;
      // 70 candidates by default (`candidatesOf`), fewer than the messages at either length.
      for (const length of [100, 400]) {
        while (next < length) await store.appendMessage(message(next++));
        reports.length = 0;
        const hits = await store.searchMessages("deploy friday", 10);
        perLength[length] = read();
        expect(hits).toHaveLength(10);
      }
      console.log(`rows read by a search: ${perLength[100]} (100 messages) / ${perLength[400]} (400)`);
      // Only the best matches by bm25 are read: the candidates are bounded, not every match (a few rows
      // either way: which turns are candidates, and so their parents and days, differ).
      expect(perLength[400]).toBeLessThanOrEqual((perLength[100] ?? 0) + 20);
      // About 200: the 70 matches with their rows, the turns they lend to that are not matches, and the 30
      // candidates' messages (search-in-steps.ts). One statement doing it all read about 700.
      expect(perLength[400]).toBeLessThan(300);
    });
  }, 120_000);

  it("a deeper pool of candidates reads about one row more per candidate, the same at 100 and at 400 messages", async () => {
    await inObject("search-read-depth", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const store = (extraCandidates: number) =>
        sqliteTree(client, {
          sessionId: "chat",
          newDatabaseLayout: "keyed",
          searchRanking: { extraCandidates },
        });
      const read = () => reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
      // 30 candidates for 10 hits (`candidateCount`): 40 and 70 read, fewer than the messages at either length.
      const depths = [10, 40];
      const perLength: Record<number, number[]> = {};
      let next = 0;
      for (const length of [100, 400]) {
        while (next < length) await store(10).appendMessage(message(next++));
        perLength[length] = [];
        for (const extra of depths) {
          reports.length = 0;
          const hits = await store(extra).searchMessages("deploy friday", 10);
          perLength[length]?.push(read());
          expect(hits).toHaveLength(10);
        }
      }
      console.log(
        `rows read by a search, ${depths.map((extra) => `${30 + extra} candidates`).join(" / ")}: ${perLength[100]?.join(" / ")} (100 messages), ${perLength[400]?.join(" / ")} (400)`,
      );
      const [shallow = 0, deep = 0] = perLength[400] ?? [];
      // Each candidate more is one match read with its row (and now and then a turn it lends to that is not a
      // match); the lending, the day's share and the cut read nothing (about 10 rows each when SQL did them).
      expect((deep - shallow) / 30).toBeLessThanOrEqual(2);
      // Bounded by the candidates, not the session: the same at 400 messages as at 100, within a few rows.
      expect(deep).toBeLessThanOrEqual((perLength[100]?.[1] ?? 0) + 20);
      expect(deep).toBeLessThan(300);
    });
  }, 120_000);

  // One Durable Object often holds several sessions (a user's chats). A one-session search ANDs the session's
  // token into its MATCH (message-search.ts), so FTS5 ranks and hands over that session's matches alone: the
  // rows it reads do not grow with the other sessions' better matches (they did while the session was only a
  // filter on the rows: 203, 588 and 1,788 here). While the session was last found alone, a search first reads
  // the whole index's best without the token (what it costs on a session alone, search-in-steps.ts); when one
  // is another session's, it reads the session's again with the token, and the next 16 searches (the store's
  // `SessionShare`) use the token straight away: one search in 17 reads that first step's rows more.
  it("a search in one session of several returns only its own messages, however many better matches the others hold", async () => {
    await inObject("search-other-sessions", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const chat = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "keyed" });
      const other = sqliteTree(client, { sessionId: "other", newDatabaseLayout: "keyed" });
      const read = () => reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
      for (let index = 0; index < 100; index++) await chat.appendMessage(message(index));
      const search = async () => {
        reports.length = 0;
        const hits = await chat.searchMessages("deploy friday", 10);
        expect(hits).toHaveLength(10);
        expect(hits.every((hit) => /^m\d+$/.test(hit.id))).toBe(true);
        return read();
      };
      const alone = await search();
      const figures = [`${alone} (search 1, the session alone)`];
      const rowsRead: number[] = [];
      let next = 0;
      for (const others of [400, 1600]) {
        // Shorter, so each ranks above every message of "chat".
        while (next < others) {
          await other.appendMessage({
            id: `other-${next}`,
            role: next++ % 2 === 0 ? "user" : "assistant",
            parts: [{ type: "text", text: "deploy friday" }],
          });
        }
        for (let round = 0; round < 17; round++) {
          rowsRead.push(await search());
          if (round < 2) {
            figures.push(
              `${rowsRead.at(-1)} (search ${rowsRead.length + 1}, ${others} better matches elsewhere)`,
            );
          }
        }
      }
      console.log(`rows read by a search of a 100-message session: ${figures.join(", ")}`);
      // Every search is bounded by the session's own matches, whatever the others hold; all but the one probing
      // search every 17 read what a search of the session alone reads (± a few: the session's own candidates).
      expect(alone).toBeLessThan(300);
      expect(Math.max(...rowsRead)).toBeLessThan(300);
      expect(rowsRead.filter((rows) => Math.abs(rows - alone) > 20)).toHaveLength(2);
      expect([rowsRead[0], rowsRead[17]].every((rows) => rows !== undefined && rows > alone + 20)).toBe(true);
    });
  }, 120_000);
});
