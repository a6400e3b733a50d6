import { randomUUID } from "node:crypto";
import type { SessionMessage } from "@contextblocks/sessions";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { foldedForIndex } from "../src/folded-words.js";
import { PostgresSearchProvider } from "../src/index.js";
import { createSchema, postgresUrl, type TestSchema } from "./database.js";
import { postgresTree, type SearchableTree } from "./message-tree.js";

// Postgres indexes some words otherwise than a query's terms are cut: its `english` configuration keeps
// diacritics ("café" is 'café', while a query is folded as FTS5 folds, "cafe"), so the search fields index a
// text with them taken off; and its parser keeps an e-mail address, a host, a URL, a path or a version number whole, so a
// search asks for such words as written too.

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

/** The ids of a search's hits matched by their own text, sorted. */
async function ownHits(store: SearchableTree, query: string): Promise<string[]> {
  return (await store.searchMessages(query, 10))
    .filter((hit) => hit.matchedBy === "text")
    .map((hit) => hit.id)
    .sort();
}

const keysOf = (result: string | null) =>
  [...(result ?? "").matchAll(/^\[([^\]\n]*)\]$/gm)].map((match) => match[1]).sort();

describe("a word written with diacritics", () => {
  it("finds the messages that hold it, written with them or without", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("accented", "We met at the Café Müller with Zoë."));
    await store.appendMessage(message("gap-1", "Then the weather turned.", "assistant"));
    await store.appendMessage(message("gap-2", "It rained all week long."));
    await store.appendMessage(message("gap-3", "The garden needed it.", "assistant"));
    await store.appendMessage(message("plain", "The cafe on the corner closed."));
    const own = (query: string) => ownHits(store, query);
    expect(await own("café")).toEqual(["accented", "plain"]);
    expect(await own("Zoë")).toEqual(["accented"]);
    expect(await own("Müller's café")).toEqual(["accented", "plain"]);
    // The pair as written ranks the message that holds it first.
    expect((await store.searchMessages("the café müller opening hours", 10))[0]?.id).toBe("accented");
    // Written without them, as people type: the index holds every word folded too (`folded_text`).
    expect(await own("cafe")).toEqual(["accented", "plain"]);
    expect(await own("zoe muller")).toEqual(["accented"]);
  });

  it("finds a capital Latin letter with a diacritic in lower case, whatever the database's locale", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("capital", "Ångström and Émile wrote from Österreich."));
    await store.appendMessage(message("reply", "Noted.", "assistant"));
    // A diacritic written as a combining mark (NFD text) goes with the fold too.
    await store.appendMessage(message("decomposed", "A cafe\u0301 noir, s'il vous plai\u0302t."));
    const own = (query: string) => ownHits(store, query);
    expect(await own("ångström")).toEqual(["capital"]);
    expect(await own("emile osterreich")).toEqual(["capital"]);
    expect(await own("cafe noir")).toEqual(["decomposed"]);
    expect(await own("café")).toEqual(["decomposed"]);
  });

  it("finds the knowledge entries that hold it", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-accented", "Zoë orders a crème brûlée at the café.");
    await search.set("kb-plain", "The cafe serves creme brulee on Fridays.");
    await search.set("kb-other", "The bakery opens at seven.");
    expect(keysOf(await search.search("café"))).toEqual(["kb-accented", "kb-plain"]);
    expect(keysOf(await search.search("crème brûlée"))).toEqual(["kb-accented", "kb-plain"]);
    expect(keysOf(await search.search("Zoë"))).toEqual(["kb-accented"]);
    expect(keysOf(await search.search("cafe creme brulee"))).toEqual(["kb-accented", "kb-plain"]);
    expect(keysOf(await search.search("zoe"))).toEqual(["kb-accented"]);
  });
});

describe("a word stored in one Unicode form and searched in the other", () => {
  // macOS writes Korean and Japanese decomposed (NFD: "한" as its three jamo, "が" as "か" and a voiced mark),
  // which Postgres' parser keeps as other words than the composed ones a query is folded to; accented Greek and
  // Cyrillic decompose into combining marks.
  it("finds the messages and the knowledge entries that hold it, either way", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    const search = new PostgresSearchProvider(client, "knowledge");
    const texts = {
      korean: "오늘 한국어 수업이 있어요".normalize("NFD"),
      russian: "Мой родной край далеко".normalize("NFD"),
      greek: "Ο καφές είναι έτοιμος",
      japanese: "わたしは ラジオが すきです".normalize("NFD"),
    };
    for (const [id, text] of Object.entries(texts)) {
      await store.appendMessage(message(id, text));
      await store.appendMessage(message(`${id}-reply`, "Noted.", "assistant"));
      await search.set(id, text);
    }
    await search.set("other", "Nothing to do with the rest.");
    for (const form of ["NFC", "NFD"] as const) {
      const words: [string, string][] = [
        ["korean", "한국어"],
        ["russian", "край"],
        ["greek", "καφές"],
        ["japanese", "ラジオが"],
      ];
      for (const [id, word] of words) {
        expect(await ownHits(store, word.normalize(form))).toEqual([id]);
        expect(keysOf(await search.search(word.normalize(form)))).toEqual([id]);
      }
    }
    // Stored as sent: only the index composes.
    expect(keysOf(await search.search("korean"))).toEqual(["korean"]);
    expect(await search.search("korean")).toContain(texts.korean);
  });
});

describe("a knowledge table created before words were folded", () => {
  /** The table as an earlier release (or Cloudflare agents' docs) created it, the content indexed as written. */
  async function earlierTable(client: pg.Client, content: string): Promise<void> {
    await client.query(`CREATE TABLE cf_agents_search_entries (label TEXT NOT NULL, key TEXT NOT NULL,
      content TEXT NOT NULL, content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
      created_at TIMESTAMPTZ DEFAULT NOW(), updated_at TIMESTAMPTZ DEFAULT NOW(), PRIMARY KEY (label, key))`);
    await client.query(
      "INSERT INTO cf_agents_search_entries (label, key, content) VALUES ('knowledge', 'kb-old', $1)",
      [content],
    );
  }

  it("is folded by the first write of a client, and its entries are found without their diacritics", async () => {
    const client = await schema.client();
    await earlierTable(client, "Zoë runs the café.");
    const search = new PostgresSearchProvider(client, "knowledge");
    // A read leaves the table as it is.
    expect(keysOf(await search.search("cafe"))).toEqual([]);
    expect(keysOf(await search.search("café"))).toEqual(["kb-old"]);
    await search.set("kb-new", "Müller bakes the bread.");
    expect(keysOf(await search.search("cafe zoe"))).toEqual(["kb-old"]);
    expect(keysOf(await search.search("muller"))).toEqual(["kb-new"]);
    // Another provider on the same client asks no more: one statement per write.
    const statements: string[] = [];
    const again = new PostgresSearchProvider(client, {
      label: "knowledge",
      onStatement: (report) => statements.push(report.text),
    });
    await again.set("kb-more", "More bread.");
    await again.set("kb-more", "Still more bread.");
    expect(statements.filter((text) => text.includes("pg_attrdef"))).toHaveLength(1);
  });

  it("is folded when writers on four connections first write to it at once, every write kept", async () => {
    const admin = await schema.client();
    await earlierTable(admin, "Crème brûlée.");
    const clients = await Promise.all(Array.from({ length: 4 }, () => schema.client()));
    await Promise.all(
      clients.map((client, index) =>
        new PostgresSearchProvider(client, "knowledge").set(`kb-${index}`, "Café au lait."),
      ),
    );
    const search = new PostgresSearchProvider(admin, "knowledge");
    expect(keysOf(await search.search("creme brulee"))).toEqual(["kb-old"]);
    expect(keysOf(await search.search("cafe"))).toEqual(["kb-0", "kb-1", "kb-2", "kb-3"]);
  });
});

describe("a database that is not UTF8", () => {
  it("stores and finds words with diacritics as written (normalize needs UTF8, so nothing is folded)", async () => {
    const name = `latin_${randomUUID().replaceAll("-", "")}`;
    const admin = new pg.Client({ connectionString: postgresUrl() });
    await admin.connect();
    await admin.query(
      `CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
    );
    const url = new URL(postgresUrl());
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      const store = postgresTree(client, "chat");
      await store.appendMessage(message("accented", "We met at the Café Müller."));
      await store.appendMessage(message("reply", "Nice.", "assistant"));
      expect(await ownHits(store, "café")).toEqual(["accented"]);
      expect(await ownHits(store, "cafe")).toEqual([]);
      const search = new PostgresSearchProvider(client, "knowledge");
      await search.set("kb-accented", "Zoë orders a crème brûlée.");
      expect(keysOf(await search.search("crème brûlée"))).toEqual(["kb-accented"]);
    } finally {
      await client.end();
      await admin.query(`DROP DATABASE ${name}`);
      await admin.end();
    }
  });
});

describe("addresses, hosts, URLs, paths and versions in a query", () => {
  it("find the messages that hold them", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("mail", "Write to john@example.com about the invoice."));
    await store.appendMessage(message("ok", "Will do.", "assistant"));
    await store.appendMessage(message("link", "The guide is at docs.example.com/setup, step three."));
    await store.appendMessage(message("thanks", "Thanks!", "assistant"));
    await store.appendMessage(message("version", "We pinned node-postgres 8.23.1 last week."));
    await store.appendMessage(message("other", "Nothing to see here.", "assistant"));
    await store.appendMessage(message("covid", "The COVID-19 rules changed in March."));
    await store.appendMessage(message("after", "Good to know.", "assistant"));
    await store.appendMessage(
      message("repo", "The fix is in https://github.com/cloudflare/agents/pull/2140 now."),
    );
    await store.appendMessage(message("noted", "Noted.", "assistant"));
    await store.appendMessage(message("path", "Edit /etc/nginx/nginx.conf and reload."));
    await store.appendMessage(message("done", "Done.", "assistant"));
    const own = (query: string) => ownHits(store, query);
    const first = async (query: string) => (await store.searchMessages(query, 10))[0]?.id;
    // The text holding the whole ranks first; a text holding some of its words is found too, as on SQLite.
    expect(await first("what is john@example.com?")).toBe("mail");
    expect(await first("docs.example.com/setup")).toBe("link");
    expect(await own("which version, 8.23.1?")).toEqual(["version"]);
    expect(await own("covid-19 rules")).toEqual(["covid"]);
    // A word of an address, a link or a path finds the text (Postgres' parser keeps each whole).
    expect(await own("example")).toEqual(["link", "mail"]);
    expect(await own("github pull request")).toEqual(["repo"]);
    expect(await own("cloudflare agents")).toEqual(["repo"]);
    expect(await own("nginx config")).toEqual(["path"]);
    expect(await own("etc")).toEqual(["path"]);
  });

  it("find the knowledge entries that hold them", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-mail", "Support answers at help@example.org within a day.");
    await search.set("kb-host", "The status page lives at status.example.org.");
    await search.set("kb-other", "Opening hours are nine to five.");
    const firstKey = (result: string | null) => result?.match(/^\[([^\]\n]*)\]$/m)?.[1];
    expect(firstKey(await search.search("help@example.org"))).toBe("kb-mail");
    expect(firstKey(await search.search("status.example.org"))).toBe("kb-host");
    expect(keysOf(await search.search("example"))).toEqual(["kb-host", "kb-mail"]);
  });

  it("may hold NUL or a lone surrogate: asked for as the text is indexed, never an error", async () => {
    // A compound is a whitespace-separated chunk, not a run of word characters, so it keeps what is between.
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("nul", "The log said host.example\u0000com refused us."));
    await store.appendMessage(message("reply", "Odd.", "assistant"));
    await store.appendMessage(message("lone", "Then a.b\ud800c showed up."));
    expect(await ownHits(store, "host.example\u0000com")).toEqual(["nul"]);
    // Stored with U+FFFD for the surrogate, which Postgres' parser (locale C) reads as part of a word: the message
    // is found by its other words, and the query is answered, not refused.
    await expect(ownHits(store, "a.b\ud800c")).resolves.toBeInstanceOf(Array);
    expect(await ownHits(store, "showed up")).toEqual(["lone"]);
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-host", "The host is host.example.com.");
    expect(keysOf(await search.search("host.example\u0000com"))).toEqual(["kb-host"]);
    expect(keysOf(await search.search("host.example\ud800com"))).toEqual(["kb-host"]);
  });
});

describe("a word with a capital letter outside ASCII", () => {
  // The test cluster's locale is C, where Postgres lower-cases ASCII letters only: "Москва" is 'Москва' in
  // its index, so the query must not be lower-cased before Postgres reads it.
  it("finds the texts that hold it as written", async () => {
    const client = await schema.client();
    // Under a UTF-8 locale Postgres lower-cases "Москва" too, and this would pass without the written form.
    expect((await client.query("SHOW lc_ctype")).rows[0]?.lc_ctype).toBe("C");
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("city", "We spent the summer in Москва."));
    await store.appendMessage(message("reply", "Lovely.", "assistant"));
    await store.appendMessage(message("sign", "The sign read ΟΔΟΣ ΑΘΗΝΑΣ."));
    await store.appendMessage(message("other", "Nothing else.", "assistant"));
    expect(await ownHits(store, "Москва")).toEqual(["city"]);
    expect(await ownHits(store, "ΟΔΟΣ")).toEqual(["sign"]);
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-city", "Москва is the capital.");
    await search.set("kb-other", "Paris is another.");
    expect(keysOf(await search.search("Москва"))).toEqual(["kb-city"]);
  });
});

describe("the split of addresses and paths", () => {
  it("indexes what the lookahead of the release before indexed, text by text", async () => {
    const client = await schema.client();
    const texts = [
      "john@example.com",
      "https://docs.example.com/a/b?c=1",
      "/etc/hosts and C:\\Users\\ann",
      "version 2.5.1, then 10.0",
      "a.b.c..d::e//f@@g",
      "x. y: z/ end.",
      "café.été@naïve.example",
      "..leading and trailing..",
      "a.é.b",
      "",
    ];
    // The fields' expression as this release writes it, and as the release before wrote it (a lookahead).
    const now = foldedForIndex("text");
    const earlier = now.replace("([[:alnum:]])', E' \\\\1'", "(?=[[:alnum:]])', ' '");
    expect(earlier).not.toBe(now);
    const { rows } = await client.query<{ text: string; earlier: string; now: string }>(
      `SELECT text, to_tsvector('english', ${earlier})::text AS earlier, to_tsvector('english', ${now})::text AS now
       FROM unnest($1::text[]) AS text`,
      [texts],
    );
    expect(rows).toHaveLength(texts.length);
    for (const row of rows) expect(row.now, row.text).toBe(row.earlier);
    expect(rows.find((row) => row.text === "john@example.com")?.now).toContain("'exampl'");
  });
});

// Full-width Latin from CJK input methods, ligatures, and invisible characters pasted from web pages and word
// processors: Postgres' parser reads "ｔｉｄｅ" as itself and cuts "ti\u00adde" apart.
describe("a word in a compatibility form or holding invisible characters", () => {
  const entries: [string, string][] = [
    ["wide", "ＨＩＧＨ ｔｉｄｅ at ０６:２０"],
    ["ligature", "The ﬁnance office"],
    ["pasted", "Har\u00adbour\u200bmaster on call"],
    ["plain", "Gravel and sand"],
  ];

  it("finds the knowledge entries that hold it by the plain word, and the reverse; returned as written", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    for (const [key, content] of entries) await search.set(key, content);
    expect(keysOf(await search.search("tide"))).toEqual(["wide"]);
    expect(keysOf(await search.search("finance"))).toEqual(["ligature"]);
    expect(keysOf(await search.search("harbourmaster"))).toEqual(["pasted"]);
    expect(keysOf(await search.search("ｇｒａｖｅｌ"))).toEqual(["plain"]);
    expect(keysOf(await search.search("sa\u00adnd"))).toEqual(["plain"]);
    const all = await search.search("tide finance harbourmaster gravel");
    for (const [key, content] of entries) expect(all).toContain(`[${key}]\n${content}`);
    expect(all).not.toContain("\u2060");
  });

  it("still finds a message an earlier release stored as written by its ordinary words and by the form", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("new", "The ﬁnance office"));
    await store.appendMessage(message("old", "Gravel and ｔｉｄｅ"));
    // As the release before wrote its searchable text: the text alone.
    await client.query("UPDATE assistant_messages SET text_content = 'Gravel and ｔｉｄｅ' WHERE id = 'old'");
    expect(await ownHits(store, "finance")).toEqual(["new"]);
    expect(await ownHits(store, "gravel")).toEqual(["old"]);
    expect(await ownHits(store, "ｔｉｄｅ")).toEqual(["old"]);
    const hits = await store.searchMessages("finance gravel", 10);
    expect(hits.map((hit) => hit.content).sort()).toEqual(["Gravel and ｔｉｄｅ", "The ﬁnance office"]);
  });
});
