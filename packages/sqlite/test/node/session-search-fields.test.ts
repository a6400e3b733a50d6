import type { SessionMessage } from "@contextblocks/sessions";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { datePatterns } from "@contextblocks/text";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }], ...extra };
}

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

describe("SqliteSessionStore search: the day and the speaker of a message", () => {
  it("finds a message by the day it carries, and returns its own text only", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(
      message("may", "We planted the tomatoes.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendMessage(
      message("june", "We picked the tomatoes.", { createdAt: new Date("2023-06-20T09:00:00Z") }),
    );
    const hits = await store.searchMessages("tomatoes in May 2023", 1);
    expect(hits.map((hit) => hit.id)).toEqual(["may"]);
    expect(hits[0]?.content).toBe("We planted the tomatoes.");
    const rows = temporary.database.prepare("SELECT id, time FROM assistant_fts ORDER BY rowid").all();
    expect(rows).toEqual([
      { id: "may", time: "8 May 2023" },
      { id: "june", time: "20 June 2023" },
    ]);
  });

  it("a message without a time of its own is indexed under the day its row was written", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("a", "hello"));
    await store.searchMessages("hello", 1);
    const [row] = temporary.database
      .prepare(
        "SELECT time, date(m.created_at) AS day FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id",
      )
      .all() as { time: string; day: string }[];
    const [year, month, day] = (row?.day ?? "").split("-").map(Number);
    expect(row?.time).toBe(
      `${day} ${new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, 1)).toLocaleString("en", { month: "long", timeZone: "UTC" })} ${year}`,
    );
  });

  it("ranks the turns of the speaker a query names first (a 'Name:' label, or metadata.speaker)", async () => {
    const store = sqliteTree(temporary.database, "chat");
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
    expect((await store.searchMessages("Where did Caroline go hiking?", 3))[0]?.id).toBe("c");
    expect((await store.searchMessages("Where did Xavier go hiking?", 3))[0]?.id).toBe("x");
    const speakers = temporary.database
      .prepare("SELECT speaker FROM assistant_fts WHERE id IN ('c', 'm', 'x') ORDER BY rowid")
      .all();
    expect(speakers).toEqual([{ speaker: "caroline" }, { speaker: "melanie" }, { speaker: "xavier" }]);
  });

  it("a search table of the earlier shape (context, no day) is created again and indexed from the start (lean layout)", async () => {
    const database = temporary.database;
    // The keyed layout was created with today's search table; a lean one may hold the earlier shape.
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
    await store.appendMessage(message("a", "the orchard needs water"));
    await store.searchMessages("orchard", 1);
    // The table as the previous release created it, with a row of its own (and no schema marker yet).
    database.exec(`DROP TABLE contextblocks_schema; DROP TABLE assistant_fts;
      CREATE VIRTUAL TABLE assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, content,
        context, tokenize='porter unicode61');
      INSERT INTO assistant_fts (rowid, id, session_id, role, content, context)
        SELECT rowid, id, session_id, role, 'the orchard needs water', '' FROM assistant_messages;`);
    const reopened = sqliteTree(temporary.reopen(), "chat");
    await reopened.appendMessage(message("b", "and the bees are back"));
    expect((await reopened.searchMessages("orchard bees", 10)).map((hit) => hit.id).sort()).toEqual([
      "a",
      "b",
    ]);
    const columns = (
      temporary.database.prepare("SELECT name FROM pragma_table_info('assistant_fts')").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    expect(columns).toEqual([
      "id",
      "session_id",
      "role",
      "speaker",
      "parent_row",
      "grandparent_row",
      "content",
      "context",
      "time",
      "says_when",
      "session_key",
    ]);
  });
});

describe("SqliteSessionStore search: the turns near the best match", () => {
  // A strong match, a weaker one four turns later, and a slightly stronger one far away, among small talk.
  async function chat(times: boolean) {
    const store = sqliteTree(temporary.database, {
      sessionId: "chat",
      searchRanking: { nearShare: 1, dayShare: 0 },
    });
    const texts = Array.from({ length: 24 }, (_, index) => `small talk number ${index}`);
    texts[0] = "zebra zebra zebra on the plain";
    texts[4] = "one more zebra here";
    texts[20] = "zebra here";
    for (const [index, text] of texts.entries()) {
      const day = new Date(Date.UTC(2023, 4, 1 + index));
      await store.appendMessage(message(`m${index}`, text, times ? { createdAt: day } : {}));
    }
    // The text matches' order (a turn before a match may rank through it, as a hit marked "neighbours").
    const hits = await store.searchMessages("zebra", 6);
    return hits.filter((hit) => hit.matchedBy === "text").map((hit) => hit.id);
  }

  it("lifts a turn near the best match when every candidate is of one day (no message times)", async () => {
    expect(await chat(false)).toEqual(["m0", "m4", "m20"]);
  });

  it("leaves it to the day's share when the candidates carry different days", async () => {
    expect(await chat(true)).toEqual(["m0", "m20", "m4"]);
  });
});

describe("SqliteSessionStore search: whether a message's text says when, stored with its row", () => {
  // Edge cases of the `LIKE` patterns: a word inside another ("Chicago"), a longer word ("weekend"), upper
  // case, a sign that lower-cases to an ASCII letter only outside SQLite (KELVIN SIGN), a NUL before a date.
  const texts: Record<string, string> = {
    plain: "We met in Chicago.",
    longer: "See you this weekend",
    upper: "TWO YEARS AGO it rained",
    kelvin: "a wee\u212A off",
    nul: "nothing\u0000 yesterday",
    start: "yesterday was fine",
  };
  const likeCheck = `EXISTS (SELECT 1 FROM json_each(?) WHERE ' ' || content LIKE value)`;

  for (const layout of ["lean", "keyed"] as const) {
    it(`equals the LIKE check of its text, after an append and an update (${layout} layout)`, async () => {
      const store = sqliteTree(temporary.database, { sessionId: "chat", newDatabaseLayout: layout });
      for (const [id, text] of Object.entries(texts)) await store.appendMessage(message(id, text));
      await store.updateMessage(message("plain", "We met last week in Chicago."));
      await store.searchMessages("when did we meet", 3);
      const patterns = JSON.stringify(datePatterns);
      const rows = temporary.database
        .prepare(`SELECT id, says_when, ${likeCheck} AS expected FROM assistant_fts WHERE content <> ''`)
        .all(patterns) as { id: string; says_when: number; expected: number }[];
      expect(rows.length).toBe(Object.keys(texts).length);
      for (const row of rows) expect([row.id, row.says_when]).toEqual([row.id, row.expected]);
      expect(rows.find((row) => row.id === "plain")?.says_when).toBe(1);
      expect(rows.find((row) => row.id === "kelvin")?.says_when).toBe(0);
    });
  }

  it("a search table of the shape before it is copied, each row keeping its rowid and getting its flag", async () => {
    const first = sqliteTree(temporary.database, { sessionId: "chat", newDatabaseLayout: "keyed" });
    for (const [id, text] of Object.entries(texts)) await first.appendMessage(message(id, text));
    const before = await first.searchMessages("when did it rain two years ago", 5);
    // The table as the release before wrote it: the same rows, without `says_when`, and an older marker.
    let database = temporary.database;
    database.exec(`CREATE VIRTUAL TABLE old_fts USING fts5(id UNINDEXED, session_id UNINDEXED,
      role UNINDEXED, speaker UNINDEXED, parent_row UNINDEXED, grandparent_row UNINDEXED, content, context,
      time, tokenize='porter unicode61')`);
    const kept = "rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time";
    database.exec(`INSERT INTO old_fts (${kept}) SELECT ${kept} FROM assistant_fts`);
    const rows = database.prepare(`SELECT ${kept} FROM assistant_fts ORDER BY rowid`).all();
    database.exec("DROP TABLE assistant_fts; ALTER TABLE old_fts RENAME TO assistant_fts");
    database.exec("UPDATE contextblocks_schema SET version = 2 WHERE part = 'sessions'");

    database = temporary.reopen();
    const reopened = sqliteTree(database, { sessionId: "chat" });
    expect(await reopened.searchMessages("when did it rain two years ago", 5)).toEqual(before);
    expect(database.prepare(`SELECT ${kept} FROM assistant_fts ORDER BY rowid`).all()).toEqual(rows);
    const flags = database
      .prepare(`SELECT says_when, ${likeCheck} AS expected FROM assistant_fts WHERE content <> ''`)
      .all(JSON.stringify(datePatterns)) as { says_when: number; expected: number }[];
    expect(flags.map((row) => row.says_when)).toEqual(flags.map((row) => row.expected));
    expect(flags.some((row) => row.says_when === 1)).toBe(true);
  });
});
