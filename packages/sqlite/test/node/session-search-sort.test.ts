import { defaultSearchRanking, type SearchRanking } from "@contextblocks/sessions/store-kit";
import type { SqlClient } from "@contextblocks/sql";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catchUpMessageIndex } from "../../src/message-index.js";
import { searchMessageIndex, searchSortOf } from "../../src/message-search.js";
import { SessionShare } from "../../src/session-share.js";
import { sqliteTree } from "../sqlite-tree.js";

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

const turns = [
  "Caroline: I went to the LGBTQ support group yesterday.",
  "Melanie: How was the support group?",
  "Caroline: It was powerful, the stories were moving.",
  "Melanie: I painted a sunset over the lake last week.",
  "Caroline: The lake sounds lovely. Did you go camping?",
  "Melanie: We went camping with the kids in the mountains.",
];

/**
 * `copies` of the turns appended to `sessionId` (each copy its own ids), so equal scores abound; each copy a
 * day of its own, two copies a day, when `days` (so the day's share tells them apart), from 8 May: "10 May"
 * sorts before "9 May" as text, so equal places are ordered by day as SQLite orders them, not by rowid.
 */
async function conversation(sessionId: string, copies: number, days = false): Promise<void> {
  const tree = sqliteTree(temporary.database, sessionId);
  for (let copy = 0; copy < copies; copy++) {
    for (const [index, text] of turns.entries()) {
      await tree.appendMessage({
        id: `${sessionId}-${copy}-${index}`,
        role: index % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text }],
        ...(days ? { createdAt: new Date(Date.UTC(2023, 4, 8 + Math.floor(copy / 2))) } : {}),
      });
    }
  }
}

/**
 * Rankings under which both sorts must agree: the default, without the day's share, with the near turns'
 * share (ordered by SQL either way) and with a deeper pool of candidates.
 */
const rankings: SearchRanking[] = [
  defaultSearchRanking,
  { ...defaultSearchRanking, dayShare: 0 },
  { ...defaultSearchRanking, nearShare: 0.3 },
  { ...defaultSearchRanking, extraCandidates: 40 },
];

const questions = [
  "When did Caroline go to the LGBTQ support group?",
  "What did Melanie paint?",
  "Where did they go camping with the kids?",
  "lake",
];

/**
 * A client over the test database that counts the full-text statements it runs (those that `MATCH`: a search
 * of the whole index or of one session; a search where FTS5 sorts also reads rows by key in later steps).
 */
function countingClient(): { client: SqlClient; statements: () => number } {
  let count = 0;
  const client = fromBetterSqlite3(temporary.database, {
    onStatement: (report) => {
      if (/\bMATCH\b/.test(report.text)) count++;
    },
  });
  return { client, statements: () => count };
}

describe("message search: who sorts the matches", () => {
  it("SQLite's sort where rows read are not billed, FTS5's everywhere else", () => {
    const client = fromBetterSqlite3(temporary.database);
    expect(searchSortOf(client)).toBe("bm25");
    expect(searchSortOf({ ...client, billsRows: true })).toBe("rank");
    const { billsRows: _, ...unknown } = client;
    expect(searchSortOf(unknown as SqlClient)).toBe("rank");
  });

  it.each([false, true])(
    "a session alone in the index: the same candidates in the same order, equal scores included (days: %s)",
    async (days) => {
      await conversation("alone", 8, days);
      const { client, statements } = countingClient();
      await catchUpMessageIndex(client);
      for (const ranking of rankings) {
        for (const question of questions) {
          const ranked = await searchMessageIndex(client, question, {
            limit: 30,
            sessionId: "alone",
            ranking,
          });
          const before = statements();
          const sorted = await searchMessageIndex(client, question, {
            limit: 30,
            sessionId: "alone",
            ranking,
            sort: "bm25",
            share: new SessionShare(),
          });
          // One statement: no other session's rows were among the best.
          expect(statements() - before).toBe(1);
          expect(sorted.length).toBeGreaterThan(0);
          expect(sorted).toEqual(ranked);
        }
      }
    },
  );

  it("another session's better matches: the session's own candidates, then filtered searches for a while", async () => {
    await conversation("small", 1);
    await conversation("large", 12);
    const { client, statements } = countingClient();
    await catchUpMessageIndex(client);
    const share = new SessionShare(2);
    const search = (question: string) =>
      searchMessageIndex(client, question, { limit: 30, sessionId: "small", sort: "bm25", share });
    let before = statements();
    const found = await search(questions[0] as string);
    // The whole index's best held the other session's rows: searched again, filtered.
    expect(statements() - before).toBe(2);
    expect(found.map((candidate) => candidate.id).every((id) => id.startsWith("small-"))).toBe(true);
    expect(found).toEqual(
      await searchMessageIndex(client, questions[0] as string, { limit: 30, sessionId: "small" }),
    );
    // The next two searches filter straight away; the third tries the whole index again.
    for (const expected of [1, 1, 2]) {
      before = statements();
      await search(questions[1] as string);
      expect(statements() - before).toBe(expected);
    }
  });

  it.each([false, true])(
    "a session beside others with better matches: the same candidates in the same order as FTS5's sort (days: %s)",
    async (days) => {
      // More matches in "small" than a search ranks further (70 candidates by default), so the pool is a cut.
      await conversation("small", 20, days);
      await conversation("large", 30, days);
      const { client, statements } = countingClient();
      await catchUpMessageIndex(client);
      const share = new SessionShare();
      for (const ranking of rankings) {
        for (const question of questions) {
          const before = statements();
          const sorted = await searchMessageIndex(client, question, {
            limit: 30,
            sessionId: "small",
            ranking,
            sort: "bm25",
            share,
          });
          // The session's own matches ranked in one statement (after the first search tried the whole index).
          expect(statements() - before).toBeLessThanOrEqual(2);
          expect(sorted.length).toBeGreaterThan(0);
          expect(sorted.every((candidate) => candidate.id.startsWith("small-"))).toBe(true);
          expect(sorted).toEqual(
            await searchMessageIndex(client, question, { limit: 30, sessionId: "small", ranking }),
          );
        }
      }
    },
  );

  it.each([false, true])(
    "every session's messages (the manager's search): the same candidates in the same order (days: %s)",
    async (days) => {
      await conversation("one", 3, days);
      await conversation("two", 5, days);
      const client = fromBetterSqlite3(temporary.database);
      await catchUpMessageIndex(client);
      for (const ranking of rankings) {
        for (const question of questions) {
          const sorted = await searchMessageIndex(client, question, { limit: 30, ranking, sort: "bm25" });
          expect(sorted.length).toBeGreaterThan(0);
          expect(sorted).toEqual(await searchMessageIndex(client, question, { limit: 30, ranking }));
        }
      }
    },
  );
});
