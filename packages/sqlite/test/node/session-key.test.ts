import { fromBetterSqlite3 } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { searchMessageIndex } from "../../src/message-search.js";
import { SessionShare } from "../../src/session-share.js";
import { type EarlierLayout, layoutsBeforeSessionKey, writeEarlierDatabase } from "../earlier-layouts.js";
import { HOSTILE_SESSION_IDS } from "../hostile.js";
import { ids, say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";

const opened: TemporaryDatabase[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.remove();
});

function temporary(): Database.Database {
  const database = openTemporaryDatabase();
  opened.push(database);
  return database.database;
}

/** Who sorts the matches: SQLite (better-sqlite3's default), or FTS5, as on a Durable Object. */
const sorts = [
  ["SQLite sorts", (database: Database.Database) => database],
  ["FTS5 sorts", (database: Database.Database) => ({ ...fromBetterSqlite3(database), billsRows: true })],
] as const;

/** The shared ids, and ids as short as a token's own first and last letters, or one emoji. */
const hostileSessionIds = [...HOSTILE_SESSION_IDS, "s", "z", "🦊"];

describe.each(sorts)("a one-session search finds that session's messages alone (%s)", (_sort, source) => {
  it("whatever characters the session ids hold, of any length", async () => {
    const database = temporary();
    for (const [index, sessionId] of hostileSessionIds.entries()) {
      const tree = sqliteTree(source(database), { sessionId });
      await tree.appendMessage(say(`m${index}-a`, `the deploy moved to friday, note ${index}`));
      await tree.appendMessage(say(`m${index}-b`, "the deploy friday deploy again", "assistant"));
    }
    for (const [index, sessionId] of hostileSessionIds.entries()) {
      const hits = await sqliteTree(source(database), { sessionId }).searchMessages("deploy friday", 10);
      expect(ids(hits).sort()).toEqual([`m${index}-a`, `m${index}-b`]);
    }
  });

  it("a query word spelled as a session's token matches no message by that token: not even a candidate", async () => {
    const database = temporary();
    const tree = sqliteTree(source(database), { sessionId: "chat" });
    for (let index = 0; index < 5; index++) await tree.appendMessage(say(`m${index}`, `small talk ${index}`));
    await tree.searchMessages("talk", 10);
    // The token of "chat": `s`, the hex of its bytes, `z`.
    const token = `s${Buffer.from("chat").toString("hex")}z`;
    const client = fromBetterSqlite3(database);
    for (const sessionId of ["chat", undefined]) {
      for (const sort of ["rank", "bm25"] as const) {
        const candidates = (query: string) =>
          searchMessageIndex(client, query, { limit: 10, sessionId, sort, sessionTokens: "every row" }).then(
            ids,
          );
        expect(await candidates(token)).toEqual([]);
        expect(await candidates(`${token.toUpperCase()} talk`)).toEqual(await candidates("talk"));
      }
    }
    await tree.appendMessage(say("named", `the token ${token} itself`));
    expect(ids(await tree.searchMessages(token, 10))).toEqual(["named"]);
  });
});

describe.each(layoutsBeforeSessionKey.map((fixture) => [fixture.name, fixture] as const))(
  "a database of the search table's shape before session_key (%s), opened by this release",
  (_name, fixture: EarlierLayout) => {
    const rowsOf = (database: Database.Database) =>
      database
        .prepare(
          `SELECT rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time, says_when
          FROM assistant_fts ORDER BY rowid`,
        )
        .all();

    it("keeps every search row and rowid, gives each its session's token, and searches each session apart", async () => {
      const database = temporary();
      writeEarlierDatabase((statement, ...values) => database.prepare(statement).run(...values), fixture);
      const before = rowsOf(database);
      const chat = sqliteTree(database, "chat");
      expect(ids(await chat.searchMessages("lighthouse", 5))).toEqual(["u1"]);
      expect(rowsOf(database)).toEqual(before);
      const tokens = database
        .prepare("SELECT rowid, session_id, session_key FROM assistant_fts ORDER BY rowid")
        .all() as { rowid: number; session_id: string | null; session_key: string | null }[];
      for (const row of tokens) {
        expect(row.session_key).toBe(
          row.session_id === null ? null : `s${Buffer.from(row.session_id).toString("hex").toUpperCase()}z`,
        );
      }
      // Each session finds its own messages, and only those.
      expect(ids(await chat.searchMessages("marlowe cat", 5)).sort()).toEqual(["a1", "u1", "u2"]);
      expect(await chat.searchMessages("harbour", 5)).toEqual([]);
      const other = sqliteTree(database, "other");
      expect(ids(await other.searchMessages("harbour", 5))).toEqual(["o1"]);
      expect(await other.searchMessages("lighthouse", 5)).toEqual([]);
      // The same through FTS5's sort (a Durable Object's).
      const billed = { ...fromBetterSqlite3(database), billsRows: true };
      expect(ids(await sqliteTree(billed, "other").searchMessages("harbour", 5))).toEqual(["o1"]);
      expect(await sqliteTree(billed, "chat").searchMessages("harbour", 5)).toEqual([]);
      // A message appended after the upgrade is found in its session alone.
      await other.appendMessage(say("o2", "another lighthouse"));
      expect(ids(await other.searchMessages("lighthouse", 5))).toEqual(["o2"]);
      expect(ids(await chat.searchMessages("lighthouse", 5))).toEqual(["u1"]);
    });
  },
);

describe("where FTS5 sorts, a session last found alone tries the whole index's best first", () => {
  /** "chat" talks of a lake, "other" of a deploy, and both of camping; FTS5's sort, as on a Durable Object. */
  async function twoSessions(database: Database.Database) {
    const texts: Record<string, string[]> = {
      chat: ["the lake trip", "which lake? camping there", "the lake by the mountains"],
      other: ["the deploy on friday", "camping camping camping", "the deploy moved"],
    };
    const statements: string[] = [];
    const client = {
      ...fromBetterSqlite3(database, { onStatement: (report) => statements.push(report.text) }),
      billsRows: true,
    };
    for (const [sessionId, lines] of Object.entries(texts)) {
      const tree = sqliteTree(client, { sessionId, newDatabaseLayout: "keyed" });
      // Three copies: equal scores, ordered by rowid either way.
      for (let copy = 0; copy < 3; copy++) {
        for (const [index, text] of lines.entries())
          await tree.appendMessage(say(`${sessionId}-${copy}-${index}`, text));
      }
    }
    const search = (query: string, share: SessionShare) =>
      searchMessageIndex(client, query, { limit: 5, sessionId: "chat", sessionTokens: "every row", share });
    /** The full-text statements run since the last call: with the session's token, or over the whole index. */
    const matches = () =>
      statements
        .splice(0)
        .flatMap((text) =>
          /\bMATCH\b/.test(text) ? [text.includes("session_key") ? "token" : "whole"] : [],
        );
    return { search, matches };
  }

  it("the same hits whether its share says alone or not, and one statement over the whole index when alone", async () => {
    const { search, matches } = await twoSessions(temporary());
    for (const query of ["lake", "lake mountains", "camping", "camping lake", "deploy"]) {
      matches();
      const alone = await search(query, new SessionShare());
      const aloneStatements = matches();
      const notAloneShare = new SessionShare();
      notAloneShare.notAlone();
      const notAlone = await search(query, notAloneShare);
      expect(matches()).toEqual(["token"]);
      expect(alone).toEqual(notAlone);
      expect(alone.every((hit) => hit.id.startsWith("chat-"))).toBe(true);
      // Only "chat" matches: its best are the whole index's. Otherwise "other" is among them: asked again.
      expect(aloneStatements).toEqual(
        query.includes("lake") && !query.includes("camping") ? ["whole"] : ["whole", "token"],
      );
    }
  });

  it("another session's rows among the whole index's best: the token straight away for the next retryEvery searches", async () => {
    const { search, matches } = await twoSessions(temporary());
    const share = new SessionShare(2);
    matches();
    await search("camping", share);
    expect(matches()).toEqual(["whole", "token"]);
    for (const expected of [["token"], ["token"], ["whole"]]) {
      await search("lake", share);
      expect(matches()).toEqual(expected);
    }
  });
});
