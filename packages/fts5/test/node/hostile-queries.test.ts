import { describe, expect, it } from "vitest";
import type { Fts5SearchProvider, Fts5SearchProviderOptions } from "../../src/index.js";
import { keysOf, openProvider } from "../support/databases.js";

/**
 * The query is text, never FTS5 syntax: quotes, `*`, `NEAR`, `AND`/`OR`/`NOT`, parentheses, column filters,
 * `^`, `-`, `+`, control characters, empty, whitespace and huge queries never throw and never change what
 * the words mean. Operator words are words (`NOT` finds entries containing "not"); operator characters
 * separate words like any punctuation.
 */

const entries: [string, string][] = [
  ["alpha", "Alpha station reports clear skies."],
  ["omega", "Omega station reports heavy rain."],
  ["both", "Alpha and omega stations share one radio channel."],
  ["late", "The report from alpha arrived late."],
  ["negation", "This shipment did not arrive; the customer is not happy."],
  ["near", "The near harbour is calm tonight."],
  ["omega-archive", "Gull counts by month."],
  ["alphabet", "An alphabetical list of lighthouses."],
];

async function withEntries(options: Fts5SearchProviderOptions = {}): Promise<Fts5SearchProvider> {
  const { provider } = openProvider(options);
  for (const [key, content] of entries) await provider.set(key, content);
  return provider;
}

const tenKilobytes = (unit: string) => unit.repeat(Math.ceil(10_240 / unit.length)).slice(0, 10_240);

const hostile: [string, string][] = [
  ["a lone double quote", '"'],
  ["two double quotes", '""'],
  ["an unbalanced quote", '"alpha'],
  ["a quoted phrase", '"alpha omega"'],
  ["a star", "*"],
  ["a prefix star", "alph*"],
  ["a star after a word", "alpha *"],
  ["NEAR", "NEAR(alpha omega)"],
  ["NEAR with a distance", "NEAR(alpha omega, 0)"],
  ["AND", "alpha AND omega"],
  ["OR", "alpha OR omega"],
  ["NOT between words", "alpha NOT omega"],
  ["NOT alone", "NOT"],
  ["AND alone", "AND"],
  ["OR alone", "OR"],
  ["open parenthesis", "("],
  ["close parenthesis", ")"],
  ["unbalanced parentheses", "(alpha OR (omega"],
  ["a column filter", "content:omega"],
  ["a column filter alone", "content:"],
  ["a column set filter", "{key content}:alpha"],
  ["a negated column filter", "-{content}:alpha"],
  ["a caret", "^alpha"],
  ["a minus", "-alpha"],
  ["a plus", "+alpha"],
  ["a colon", ":"],
  ["single quotes", "''"],
  ["a backslash", "\\"],
  ["SQL", "'); DROP TABLE contextblocks_search_index; --"],
  ["control characters", "\u0000alpha\u0007\u001b[31m\u007f"],
  ["a right-to-left override", "\u202eomega"],
  ["emoji only", "🔥🔥 🚀"],
  ["empty", ""],
  ["whitespace only", " \t\n\r "],
  ["punctuation only", "?!.,;:-—()[]{}<>|&%$#@"],
  ["10 kB of words", tenKilobytes("alpha omega station report ")],
  ["10 kB of operators", tenKilobytes('"*^():{}-+ NEAR AND OR NOT ')],
  ["10 kB in one token", "a".repeat(10_240)],
  ["100 kB of distinct words", Array.from({ length: 12_000 }, (_, index) => `w${index}`).join(" ")],
];

describe("hostile queries", () => {
  for (const [name, query] of hostile) {
    it(`${name}: resolves to a string or null, never throws`, async () => {
      const provider = await withEntries();
      const result = await provider.search(query);
      expect(result === null || typeof result === "string").toBe(true);
    });
  }

  it("nothing to search (empty, whitespace, punctuation, lone operators characters) is null", async () => {
    const provider = await withEntries();
    for (const query of ["", " \t\n", '"', '""', "*", "(", ")", ":", "''", "\\", "?!.,;:-—()[]{}<>|&%$#@"]) {
      expect(await provider.search(query), JSON.stringify(query)).toBeNull();
    }
  });

  it("operator words are words: NOT finds entries containing 'not'", async () => {
    const provider = await withEntries();
    expect(keysOf(await provider.search("NOT"))).toEqual(["negation"]);
    expect(await provider.search("AND")).toContain("[both]");
    expect(await provider.search("near")).toContain("[near]");
  });

  it("AND does not require both words, NOT does not exclude, NEAR does not constrain", async () => {
    const provider = await withEntries();
    expect(keysOf(await provider.search("alpha AND omega"))).toContain("alpha");
    expect(keysOf(await provider.search("alpha NOT omega"))).toEqual(
      expect.arrayContaining(["omega", "both", "alpha", "late"]),
    );
    expect(keysOf(await provider.search("NEAR(alpha omega, 0)"))).toEqual(
      expect.arrayContaining(["alpha", "omega", "both", "near"]),
    );
  });

  it("^ does not anchor, - does not negate, * is not a prefix, : is not a column filter", async () => {
    const provider = await withEntries();
    expect(keysOf(await provider.search("^alpha"))).toContain("late");
    expect(keysOf(await provider.search("-alpha"))).toContain("alpha");
    expect(await provider.search("alph*")).toBeNull();
    expect(keysOf(await provider.search("alpha*"))).not.toContain("alphabet");
    // "content:omega" is the words "content" and "omega": the entry whose key (not content) says omega is found.
    expect(keysOf(await provider.search("content:omega"))).toContain("omega-archive");
  });

  it("operator characters are separators: the result equals that of the bare words", async () => {
    // Every result with its text: a bare word that is also a key ("alpha") looks that entry up, which ranks it
    // far above the rest and would show the others as keys only.
    const provider = await withEntries({ keyOnlyBelow: 0 });
    const pairs: [string, string][] = [
      ["NEAR(alpha, omega)", "near alpha omega"],
      ["content:omega", "content omega"],
      ['"alpha" OR "omega"', "alpha or omega"],
      ["(alpha OR (omega", "alpha or omega"],
      ["^alpha -omega +station*", "alpha omega station"],
      ["{key content}:alpha", "key content alpha"],
      ["\u0000alpha\u0007", "alpha"],
    ];
    for (const [hostileQuery, words] of pairs) {
      expect(await provider.search(hostileQuery), hostileQuery).toBe(await provider.search(words));
    }
  });

  it("a 10 kB query still finds what its words find, quickly", async () => {
    const provider = await withEntries();
    const started = performance.now();
    const result = await provider.search(tenKilobytes("alpha omega station report "));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(keysOf(result)).toEqual(expect.arrayContaining(["alpha", "omega", "both"]));
  });

  it("leaves the index intact after every hostile query", async () => {
    const { provider, database } = openProvider();
    for (const [key, content] of entries) await provider.set(key, content);
    const before = database.prepare("SELECT name FROM sqlite_master ORDER BY name").all();
    for (const [, query] of hostile) await provider.search(query);
    expect(database.prepare("SELECT name FROM sqlite_master ORDER BY name").all()).toEqual(before);
    expect(await provider.get()).toBe(`${entries.length} entries indexed.`);
    expect(keysOf(await provider.search("gull counts"))).toEqual(["omega-archive"]);
  });
});
