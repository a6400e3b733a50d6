import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { compoundsOf, maximumCompounds } from "../src/compounds.js";
import {
  fts5MatchExpression,
  fts5String,
  maximumPhraseWords,
  maximumTerms,
  planQuery,
  type QueryPlan,
  type QueryTerm,
  tsqueryInputs,
} from "../src/index.js";

describe("planQuery", () => {
  it("returns null for text without a word", () => {
    for (const text of ["", "   ", "?!", '"*^()-+:', "\u0000\n\t"]) expect(planQuery(text), text).toBeNull();
  });

  it("keeps the informative words, distinct by stem, in query order", () => {
    const plan = planQuery("What does Dani eat? Dani eats running, runs!");
    expect(plan?.terms).toEqual([
      { word: "dani", stem: "dani" },
      { word: "eat", stem: "eat" },
      { word: "running", stem: "run" },
    ]);
  });

  it("searches the stopwords when the query has nothing else", () => {
    expect(planQuery("NOT")?.terms).toEqual([{ word: "not", stem: "not" }]);
    expect(planQuery("who are you")?.terms.map((term) => term.word)).toEqual(["who", "are", "you"]);
  });

  it("pairs adjacent terms from three terms on, never across a stopword", () => {
    expect(planQuery("ice cream")?.pairs).toEqual([]);
    const plan = planQuery("new york pizza and cheese");
    expect(plan?.pairs.map(([first, second]) => `${first.word} ${second.word}`)).toEqual([
      "new york",
      "york pizza",
    ]);
  });

  it("keeps the whole query as a phrase only from 2 to 12 words", () => {
    expect(planQuery("tides")?.phrase).toBeNull();
    expect(planQuery("the tides")?.phrase).toEqual(["the", "tides"]);
    const long = Array.from({ length: maximumPhraseWords + 1 }, (_, index) => `word${index}`).join(" ");
    expect(planQuery(long)?.phrase).toBeNull();
  });

  it("searches at most the first 32 distinct terms", () => {
    const text = Array.from({ length: 100 }, (_, index) => `term${index}`).join(" ");
    const terms = planQuery(text)?.terms ?? [];
    expect(terms).toHaveLength(maximumTerms);
    expect(terms[0]?.word).toBe("term0");
  });

  it("gives a query planned again the same plan, which no caller can change for the next", () => {
    const text = "Where did Ada Lovelace publish her notes on the engine?";
    const plan = planQuery(text) as QueryPlan;
    expect(plan.pairs.length).toBeGreaterThan(0);
    expect(plan.phrase).not.toBeNull();
    expect(planQuery(text)).toBe(plan);
    const original = structuredClone(plan);
    const attempts = [
      () => (plan.terms as QueryTerm[]).push({ word: "x", stem: "x" }),
      () => Object.assign(plan.terms[0] as QueryTerm, { word: "changed" }),
      () => Object.assign(plan.pairs[0]?.[1] as QueryTerm, { stem: "changed" }),
      () => (plan.phrase as string[]).pop(),
      () => Object.assign(plan, { asksWhen: !plan.asksWhen }),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(TypeError);
    expect(planQuery(text)).toEqual(original);
    // Other queries between keep it, up to the ones remembered; a long text is planned each time, alike.
    for (let index = 0; index < 8; index++) planQuery(`query number ${index}`);
    expect(planQuery(text)).toBe(plan);
    const pasted = `${"lorem ipsum dolor ".repeat(100)} sit amet`;
    expect(planQuery(pasted)).not.toBe(planQuery(pasted));
    expect(planQuery(pasted)).toEqual(planQuery(pasted));
    expect(Object.isFrozen(planQuery(pasted)?.terms)).toBe(true);
  });
});

describe("fts5MatchExpression", () => {
  it("quotes every word and pair, ORed, optionally restricted to columns", () => {
    // "OR" is a stopword: a word, left out, and no pair spans it.
    const plan = planQuery("NEAR(alpha beta) OR gamma*");
    if (plan === null) throw new Error("no plan");
    expect(fts5MatchExpression(plan)).toBe(
      '("near" OR "alpha" OR "beta" OR "gamma" OR "near alpha" OR "alpha beta")',
    );
    expect(fts5MatchExpression(plan, { column: "content" })).toMatch(/^content : \("near"/);
    expect(fts5MatchExpression(plan, { column: ["key", "content"] })).toMatch(/^\{key content\} : \(/);
  });

  it("refuses a column that is not an FTS5 column name", () => {
    const plan = planQuery("tides");
    if (plan === null) throw new Error("no plan");
    expect(() => fts5MatchExpression(plan, { column: "content) OR (x" })).toThrow(TypeError);
    expect(() => fts5MatchExpression(plan, { column: [] })).toThrow(/one or more FTS5 column names/);
  });

  it("asks for a word that decomposes in both forms, which FTS5 cuts apart", () => {
    const plan = planQuery("한국어 мой край cafe");
    if (plan === null) throw new Error("no plan");
    // An ASCII word has no second form.
    expect(plan.terms.map((term) => term.decomposed)).toEqual([
      "한국어".normalize("NFD"),
      "мой".normalize("NFD"),
      "край".normalize("NFD"),
      undefined,
    ]);
    const database = new Database(":memory:");
    database.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61')");
    const insert = database.prepare("INSERT INTO t (rowid, content) VALUES (?, ?)");
    insert.run(1, "오늘 한국어 수업".normalize("NFD"));
    insert.run(2, "мой родной край".normalize("NFD"));
    insert.run(3, "오늘 한국어 수업");
    const search = database.prepare("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid");
    const matches = (query: string) => {
      const planned = planQuery(query);
      if (planned === null) return [];
      return search.all(fts5MatchExpression(planned)).map((row) => (row as { rowid: number }).rowid);
    };
    expect(matches("한국어")).toEqual([1, 3]);
    expect(matches("한국어".normalize("NFD"))).toEqual([1, 3]);
    expect(matches("край")).toEqual([2]);
    database.close();
  });

  it("doubles inner double quotes", () => {
    expect(fts5String('say "hi"')).toBe('"say ""hi"""');
  });

  it("is read by FTS5 as words, whatever the query holds", () => {
    const database = new Database(":memory:");
    database.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61')");
    const insert = database.prepare("INSERT INTO t (rowid, content) VALUES (?, ?)");
    insert.run(1, "High tide at the harbour is at 14:10 today.");
    insert.run(2, "Dani runs NEAR the river on Sundays.");
    const search = database.prepare("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank");
    const matches = (query: string) => {
      const plan = planQuery(query);
      if (plan === null) return [];
      return search
        .all(fts5MatchExpression(plan, { column: "content" }))
        .map((row) => (row as { rowid: number }).rowid);
    };
    expect(matches("when is high tide?")).toEqual([1]);
    expect(matches('NEAR(dani "running", 0) AND content:river*')).toEqual([2]);
    expect(matches("NOT")).toEqual([]);
    database.close();
  });
});

describe("tsqueryInputs", () => {
  it("gives the plain texts to bind to plainto_tsquery and phraseto_tsquery", () => {
    const plan = planQuery("Where does Dani buy ice cream?");
    if (plan === null) throw new Error("no plan");
    expect(tsqueryInputs(plan)).toEqual({
      terms: ["dani", "buy", "ice", "cream"],
      pairs: ["dani buy", "buy ice", "ice cream"],
      phrase: "where does dani buy ice cream",
      writtenTerms: [null, null, null, null],
      writtenPairs: [null, null, null],
      compounds: [],
    });
  });

  it("gives the words as written where folding removed diacritics, which Postgres' english keeps", () => {
    const plan = planQuery("Was Zoë at the Café Müller?");
    if (plan === null) throw new Error("no plan");
    expect(plan.terms.map((term) => [term.word, term.written])).toEqual([
      ["zoe", "zoë"],
      ["cafe", "café"],
      ["muller", "müller"],
    ]);
    expect(tsqueryInputs(plan)).toMatchObject({
      terms: ["zoe", "cafe", "muller"],
      writtenTerms: ["zoë", "café", "müller"],
      pairs: ["cafe muller"],
      writtenPairs: ["café müller"],
    });
    // ASCII letters' case alone is not written apart, nor are letters folding keeps (ß, Cyrillic й); a capital
    // outside ASCII is kept for Postgres to lower-case as its locale does (under C, not at all).
    const plain = planQuery("Straße йога Tide ЙОГА Zoë");
    expect(plain?.terms.map((term) => [term.word, term.written])).toEqual([
      ["straße", undefined],
      ["йога", undefined],
      ["tide", undefined],
      ["zoe", "zoë"],
    ]);
    expect(planQuery("ЙОГА ΟΔΟΣ École")?.terms.map((term) => term.written)).toEqual([
      "ЙОГА",
      "ΟΔΟΣ",
      "École",
    ]);
  });

  it("never carries tsquery operators: only folded words and spaces", () => {
    const plan = planQuery("a & b | !c <-> 'd':* (e)");
    if (plan === null) throw new Error("no plan");
    const inputs = tsqueryInputs(plan);
    for (const text of [
      ...inputs.terms,
      ...inputs.pairs,
      inputs.phrase ?? "",
      ...inputs.writtenTerms.map((written) => written ?? ""),
      ...inputs.writtenPairs.map((written) => written ?? ""),
    ]) {
      expect(text).toMatch(/^[\p{L}\p{N} ]*$/u);
    }
  });
});

describe("compoundsOf", () => {
  it("keeps whole what Postgres' parser keeps whole: addresses, hosts, URLs, paths, versions", () => {
    expect(
      compoundsOf(
        "Mail john@Example.com, see (docs.example.com/setup). Version 2.5.1 at /etc/nginx/nginx.conf? and U.S.",
      ),
    ).toEqual([
      "john@example.com",
      "docs.example.com/setup",
      "docs.example.com",
      "2.5.1",
      "/etc/nginx/nginx.conf",
      "u.s",
    ]);
    // A URL's host is asked for too, without its scheme.
    expect(compoundsOf("https://GitHub.com/brianc/node-postgres")).toEqual([
      "https://github.com/brianc/node-postgres",
      "github.com",
    ]);
    // A hyphen before digits joins too ("-19" is a signed number there); before letters it does not.
    expect(compoundsOf("COVID-19 on 2023-05-08 in state-of-the-art Wi-Fi")).toEqual([
      "covid-19",
      "2023-05-08",
    ]);
    // Words joined otherwise, or standing alone, are terms only.
    expect(compoundsOf("state-of-the-art don't co_op 10, 20 ... a. .b")).toEqual([]);
    expect(planQuery("where is docs.example.com?")?.compounds).toEqual(["docs.example.com"]);
    expect(planQuery("where is the harbour?")?.compounds).toEqual([]);
  });

  it("reads a bounded number, each once, and never one longer than 1,024 characters", () => {
    const many = Array.from({ length: 20 }, (_, index) => `host${index}.example.com host0.example.com`).join(
      " ",
    );
    expect(compoundsOf(many)).toHaveLength(maximumCompounds);
    expect(new Set(compoundsOf(many)).size).toBe(maximumCompounds);
    expect(compoundsOf(`${"a.".repeat(600)}b`)).toEqual([]);
  });
});
