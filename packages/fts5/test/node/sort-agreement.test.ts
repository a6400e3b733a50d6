import { readFileSync } from "node:fs";
import { fromBetterSqlite3, type SqlClient } from "@contextblocks/sql";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { memoryDatabase } from "../support/databases.js";

/**
 * The two ways a search's matches are sorted (`sort: "rank"`, FTS5's `ORDER BY rank`, and `sort: "bm25"`,
 * SQLite's `ORDER BY bm25(...)`) return the same results in the same order, on the retrieval benchmark's
 * corpus of personal-assistant notes (bench/data/fts5) and on random queries of its words. A fixed seed in
 * CI, a random one locally; fast-check prints the seed and the query on failure.
 */
const settings = { numRuns: 300, ...(process.env.CI ? { seed: 25_015 } : {}) };

const data = new URL("../../../../bench/data/fts5/", import.meta.url);
const corpus = jsonLines<{ key: string; content: string }>(new URL("corpus.jsonl", data));
const questions = jsonLines<{ question: string }>(new URL("questions.jsonl", data)).map(
  (line) => line.question,
);
const words = [...new Set(corpus.flatMap((entry) => entry.content.split(/\s+/)))].filter(
  (word) => word.length > 0,
);

function jsonLines<T>(file: URL): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

/** Two providers on one database and label, one per sort, and a third label beside them for `placement`. */
async function providers(
  placement: "alone" | "beside another label",
  options: { keyOnlyBelow?: number; limit?: number } = {},
) {
  const database = memoryDatabase();
  const byRank = new Fts5SearchProvider(database, { label: "notes", sort: "rank", ...options });
  const byBm25 = new Fts5SearchProvider(database, { label: "notes", sort: "bm25", ...options });
  database.exec("BEGIN");
  for (const { key, content } of corpus) await byRank.set(key, content);
  // Pairs of entries with the same content and keys of as many words, none a corpus word: exact ties in
  // bm25, which both sorts must break alike (in rowid order).
  for (const [index, { content }] of corpus.slice(0, 40).entries()) {
    await byRank.set(`copy-xq-${index}`, content);
    await byRank.set(`copy-zv-${index}`, content);
  }
  if (placement === "beside another label") {
    const other = new Fts5SearchProvider(database, "other");
    for (const { key, content } of corpus.slice(0, 200)) await other.set(key, content.toUpperCase());
  }
  database.exec("COMMIT");
  return { byRank, byBm25 };
}

describe("the two sorts of a search agree", () => {
  for (const placement of ["alone", "beside another label"] as const) {
    it(`on every benchmark question, ${placement}`, async () => {
      const { byRank, byBm25 } = await providers(placement, { keyOnlyBelow: 0 });
      let results = 0;
      for (const question of questions) {
        const expected = await byRank.search(question);
        expect(await byBm25.search(question), question).toBe(expected);
        if (expected !== null) results++;
      }
      // The comparison is not of empty results.
      expect(results).toBeGreaterThan(questions.length * 0.9);
    });

    it(`on random queries of the corpus's words, ${placement}`, async () => {
      const { byRank, byBm25 } = await providers(placement, { limit: 20 });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }),
          async (query) => {
            const text = query.join(" ");
            expect(await byBm25.search(text)).toBe(await byRank.search(text));
          },
        ),
        settings,
      );
    });
  }
});

describe("which sort a provider uses", () => {
  it("sorts by a bm25() expression on better-sqlite3, whose rows read are not billed", async () => {
    const statements: string[] = [];
    const provider = new Fts5SearchProvider(memoryDatabase(), {
      label: "notes",
      onStatement: ({ text }) => statements.push(text),
    });
    expect(provider.sort).toBe("bm25");
    await provider.set("tide", "High tide at the harbour is at 14:10.");
    await provider.search("when is high tide?");
    const search = statements.filter((text) => text.includes("ORDER BY"));
    expect(search.at(-1)).toMatch(/ORDER BY score/);
    expect(search.some((text) => text.includes("ORDER BY rank"))).toBe(false);
  });

  it("lets FTS5 sort by rank on a client that does not say whether rows read are billed", async () => {
    const statements: string[] = [];
    const inner = fromBetterSqlite3(memoryDatabase(), { onStatement: ({ text }) => statements.push(text) });
    // A client of its own making (over node:sqlite, D1, …) without `billsRows`: taken as billed.
    const client: SqlClient = {
      dialect: inner.dialect,
      atomic: inner.atomic,
      query: (strings, ...values) => inner.query(strings, ...values),
      run: (statement) => inner.run(statement),
      batch: (group) => inner.batch(group),
    };
    const provider = new Fts5SearchProvider(client, "notes");
    expect(provider.sort).toBe("rank");
    await provider.set("tide", "High tide at the harbour is at 14:10.");
    await provider.search("when is high tide?");
    expect(statements.filter((text) => text.includes("ORDER BY")).at(-1)).toMatch(/ORDER BY rank/);
  });

  it("takes the sort option over the client's default, and refuses any other value", () => {
    expect(new Fts5SearchProvider(memoryDatabase(), { label: "notes", sort: "rank" }).sort).toBe("rank");
    expect(
      () => new Fts5SearchProvider(memoryDatabase(), { label: "notes", sort: "score" as "rank" }),
    ).toThrow(/sort must be "rank" or "bm25", got "score"/);
  });
});
