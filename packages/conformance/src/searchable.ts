import type { ContextProvider, SearchProvider } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { HOSTILE_QUERIES } from "./hostile-queries.js";
import { describeResult, entriesIn, positionOf } from "./locate.js";
import { DEFAULT_SEARCH_LIMIT } from "./options.js";
import { startConcurrently } from "./scheduling.js";
import {
  CAPPED_QUERY,
  cappedCorpus,
  GENERAL_CORPUS,
  GENERAL_ENTRIES,
  HOSTILE_CORPUS,
  HOSTILE_ENTRIES,
  MORE_TERMS,
  NO_MATCH_QUERY,
  QUESTION_QUERY,
  RARER_TERM,
  type SearchEntry,
  STEMMED_QUERY,
  SYNTAX_CHECKS,
  WORD_QUERY,
} from "./search-corpus.js";
import { check, concurrencyCheck, firstMissing, group, needsReopen, type Suite } from "./suite.js";
import { isPromiseLike, numbersIn } from "./values.js";

type Searchable = ContextProvider & SearchProvider & { set(key: string, content: string): Promise<void> };

const NATO = ["alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"];

/** A distinct searchable word for writer `index`, for any number of writers: its digits as radio words. */
export function radioWord(index: number): string {
  return [...String(index)].map((digit) => NATO[Number(digit)]).join("");
}

/**
 * Searchable: `get()` is a count, `set(key, …)` replaces one entry, search finds by word, stem and question,
 * caps and ranks its results, keeps labels apart, and reads every query as plain text.
 */
export function searchableGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const limit = suite.options.searchLimit ?? DEFAULT_SEARCH_LIMIT;
  const writers = suite.writers;
  const needsSet = suite.declared.writable ? null : "needs set(key, content)";
  const needsDelete = suite.declared.delete ? null : "needs delete(key)";

  group("searchable", suite, suite.declared.searchable, (fixture) => {
    const open = async (label = "knowledge") => (await fixture.create(label)) as P & Searchable;
    const reopen = async (provider: P, label = "knowledge") =>
      (await fixture.reopen(provider, label)) as P & Searchable;
    const withEntries = async (entries: readonly SearchEntry[], label = "knowledge") => {
      const provider = await open(label);
      for (const entry of entries) await provider.set(entry.key, entry.content);
      return provider;
    };
    const expectFound = async (
      provider: Searchable,
      query: string,
      entry: SearchEntry,
      corpus: readonly SearchEntry[],
    ) => {
      const result = await provider.search(query);
      expect(
        positionOf(result, entry),
        `search(${JSON.stringify(query)}) should find ${entry.key}; got ${describeResult(result, corpus)}`,
      ).toBeGreaterThanOrEqual(0);
      return result;
    };

    check(suite, "get() is null or a zero count when empty", null, async () => {
      const value = await (await open()).get();
      expect(isEmptySummary(value), `an empty index's get() returned ${describeValue(value)}`).toBe(true);
    });

    check(suite, "search() returns a promise of null on an empty index", null, async () => {
      const provider = await open();
      const pending = provider.search(WORD_QUERY.query);
      expect(isPromiseLike(pending), "search() returns a promise").toBe(true);
      expect(await pending).toBeNull();
    });

    check(suite, "search() returns null when nothing matches", needsSet, async () => {
      const provider = await withEntries(GENERAL_CORPUS);
      expect(await provider.search(NO_MATCH_QUERY)).toBeNull();
    });

    check(suite, "get() summarises: it states the number of entries, not their text", needsSet, async () => {
      const provider = await withEntries(GENERAL_CORPUS.slice(0, 3));
      const summary = await provider.get();
      expect(statesCount(summary, 3), `get() with 3 entries returned ${describeValue(summary)}`).toBe(true);
      for (const entry of GENERAL_CORPUS.slice(0, 3)) {
        expect(summary ?? "", "the summary holds an entry's text").not.toContain(entry.content);
      }
      await provider.set(GENERAL_ENTRIES.ferry.key, GENERAL_ENTRIES.ferry.content);
      const after = await provider.get();
      expect(statesCount(after, 4), `get() with 4 entries returned ${describeValue(after)}`).toBe(true);
    });

    check(suite, "set(key, …) twice keeps one entry, with the second text", needsSet, async () => {
      const provider = await open();
      const first = { key: "kb-pet", content: "The office pet is a marmot named Biscuit." };
      const second = { key: "kb-pet", content: "The office pet is an otter named Pebble." };
      await provider.set(first.key, first.content);
      await provider.set(second.key, second.content);
      const summary = await provider.get();
      expect(
        statesCount(summary, 1),
        `get() after two sets of one key returned ${describeValue(summary)}`,
      ).toBe(true);
      const old = await provider.search("marmot");
      expect(old === null || !old.includes(first.content), "the replaced text is still found").toBe(true);
      const current = await provider.search("otter");
      expect(positionOf(current, second), "search(otter) misses the new text").toBeGreaterThanOrEqual(0);
    });

    check(suite, "search finds an entry by a word in it", needsSet, async () => {
      await expectFound(
        await withEntries(GENERAL_CORPUS),
        WORD_QUERY.query,
        WORD_QUERY.expected,
        GENERAL_CORPUS,
      );
    });

    check(suite, "search finds an entry by another form of its words (stemming)", needsSet, async () => {
      const provider = await withEntries(GENERAL_CORPUS);
      await expectFound(provider, STEMMED_QUERY.query, STEMMED_QUERY.expected, GENERAL_CORPUS);
    });

    check(
      suite,
      "search finds an entry by a natural-language question whose words are not all in it, first",
      needsSet,
      async () => {
        const provider = await withEntries(GENERAL_CORPUS);
        const result = await expectFound(
          provider,
          QUESTION_QUERY.query,
          QUESTION_QUERY.expected,
          GENERAL_CORPUS,
        );
        expect(
          entriesIn(result, GENERAL_CORPUS)[0]?.key,
          `ranking: ${describeResult(result, GENERAL_CORPUS)}`,
        ).toBe(QUESTION_QUERY.expected.key);
      },
    );

    check(suite, `results are capped at ${limit}`, needsSet, async () => {
      const corpus = cappedCorpus(limit + 5);
      const provider = await withEntries(corpus);
      const found = entriesIn(await provider.search(CAPPED_QUERY), corpus);
      expect(found.length, `${corpus.length} entries match; how many came back`).toBeGreaterThan(0);
      expect(found.length, `${corpus.length} entries match; how many came back`).toBeLessThanOrEqual(limit);
    });

    for (const [title, ranking] of [
      ["an entry matching more of the query's words ranks first", MORE_TERMS],
      ["an entry matching a rarer query word ranks first", RARER_TERM],
    ] as const) {
      check(suite, title, needsSet, async () => {
        const corpus = [...ranking.others, ranking.expected];
        const provider = await withEntries(corpus);
        const result = await provider.search(ranking.query);
        expect(
          entriesIn(result, corpus)[0]?.key,
          `search(${JSON.stringify(ranking.query)}) returned ${describeResult(result, corpus)}`,
        ).toBe(ranking.expected.key);
      });
    }

    check(
      suite,
      "a fresh instance on the same backing store finds what an earlier one indexed",
      firstMissing(needsSet, needsReopen(suite)),
      async () => {
        const writer = await withEntries(GENERAL_CORPUS);
        const reader = await reopen(writer);
        await expectFound(reader, WORD_QUERY.query, WORD_QUERY.expected, GENERAL_CORPUS);
        const summary = await reader.get();
        expect(statesCount(summary, GENERAL_CORPUS.length), `reopened get(): ${describeValue(summary)}`).toBe(
          true,
        );
      },
    );

    check(
      suite,
      "labels are isolated: search and count see only their own label's entries",
      firstMissing(needsSet, needsReopen(suite)),
      async (test) => {
        const alpha = await withEntries([GENERAL_ENTRIES.lighthouse, GENERAL_ENTRIES.ferry], "alpha");
        test.skip(typeof alpha.init !== "function", "the provider has no init(label)");
        const beta = await reopen(alpha, "beta");
        expect(
          isEmptySummary(await beta.get()),
          "an unused label's get() counts another label's entries",
        ).toBe(true);
        expect(
          await beta.search("lighthouse"),
          "an unused label's search finds another label's entry",
        ).toBeNull();
        const betaEntry = {
          key: GENERAL_ENTRIES.lighthouse.key,
          content: "Beta keeps its own harbour notes.",
        };
        await beta.set(betaEntry.key, betaEntry.content);
        expect(statesCount(await beta.get(), 1), "beta's count").toBe(true);
        expect(statesCount(await alpha.get(), 2), "alpha's count after beta wrote").toBe(true);
        expect(await alpha.search("harbour"), "alpha finds beta's entry").toBeNull();
        // Beta may match its own entry (a provider may search keys too); it must not return alpha's text.
        expect(
          (await beta.search("lighthouse")) ?? "",
          "beta finds alpha's entry of the same key",
        ).not.toContain(GENERAL_ENTRIES.lighthouse.content);
        await expectFound(alpha, "lighthouse", GENERAL_ENTRIES.lighthouse, GENERAL_CORPUS);
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent set() calls of different keys keep every entry`,
      needsSet,
      async () => {
        const words = Array.from({ length: writers }, (_, index) => radioWord(index));
        const entries = words.map((word) => ({ key: `kb-${word}`, content: `Radio word ${word}.` }));
        for (const schedule of suite.schedules) {
          const provider = await open();
          await startConcurrently(writers, schedule, (index) => {
            const entry = entries[index] as SearchEntry;
            return provider.set(entry.key, entry.content);
          });
          const summary = await provider.get();
          expect(statesCount(summary, writers), `get() (${schedule.name}): ${describeValue(summary)}`).toBe(
            true,
          );
          for (const [index, entry] of entries.entries()) {
            await expectFound(provider, words[index] as string, entry, entries);
          }
        }
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent set() calls of one key leave one entry`,
      needsSet,
      async () => {
        const words = Array.from({ length: writers }, (_, index) => radioWord(index));
        for (const schedule of suite.schedules) {
          const provider = await open();
          await startConcurrently(writers, schedule, (index) =>
            provider.set("kb-radio", `Radio word ${words[index]}.`),
          );
          const summary = await provider.get();
          expect(statesCount(summary, 1), `get() (${schedule.name}): ${describeValue(summary)}`).toBe(true);
          const result = await provider.search("radio");
          const matches = words.filter((word) => result?.includes(`Radio word ${word}.`));
          expect(matches.length, `search("radio") (${schedule.name}) returned ${describeValue(result)}`).toBe(
            1,
          );
        }
      },
    );

    check(
      suite,
      "an instance that searched and counted finds and counts what another instance indexed since (no read cache)",
      firstMissing(needsSet, needsReopen(suite)),
      async () => {
        const reader = await withEntries([GENERAL_ENTRIES.lighthouse]);
        await expectFound(reader, WORD_QUERY.query, WORD_QUERY.expected, GENERAL_CORPUS);
        expect(await reader.search("ferry"), "search() before the other instance's write").toBeNull();
        await reader.get();
        const writer = await reopen(reader);
        await writer.set(GENERAL_ENTRIES.ferry.key, GENERAL_ENTRIES.ferry.content);
        await expectFound(reader, "ferry", GENERAL_ENTRIES.ferry, GENERAL_CORPUS);
        const summary = await reader.get();
        expect(
          statesCount(summary, 2),
          `get() on the instance that counted before another instance wrote returned ${describeValue(summary)}`,
        ).toBe(true);
      },
    );

    check(
      suite,
      "delete(key) removes the entry from search and count",
      firstMissing(needsSet, needsDelete),
      async () => {
        const provider = await withEntries(GENERAL_CORPUS);
        await (provider as P & Searchable & { delete(key: string): Promise<void> }).delete(
          GENERAL_ENTRIES.lighthouse.key,
        );
        const result = await provider.search("lighthouse");
        expect(positionOf(result, GENERAL_ENTRIES.lighthouse), "the deleted entry is still found").toBe(-1);
        expect(statesCount(await provider.get(), GENERAL_CORPUS.length - 1), "count after delete").toBe(true);
      },
    );

    check(suite, "delete(key) of an unknown key resolves", needsDelete, async () => {
      const provider = (await open()) as P & Searchable & { delete(key: string): Promise<void> };
      await provider.delete("kb-never-written");
    });

    for (const hostile of HOSTILE_QUERIES) {
      check(suite, `search(${hostile.name}) resolves to a string or null`, null, async () => {
        const provider = suite.declared.writable ? await withEntries(HOSTILE_CORPUS) : await open();
        let result: unknown;
        try {
          result = await provider.search(hostile.query);
        } catch (error) {
          expect.fail(
            `search(${describeValue(hostile.query)}) threw: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        expect(result === null || typeof result === "string", `resolved to ${describeValue(result)}`).toBe(
          true,
        );
      });
    }

    for (const syntax of SYNTAX_CHECKS) {
      check(suite, `query text is not syntax: ${syntax.name}`, needsSet, async () => {
        const provider = await withEntries(HOSTILE_CORPUS);
        const result = await provider.search(syntax.query).catch((error: unknown) => {
          expect.fail(`search(${JSON.stringify(syntax.query)}) threw: ${String(error)}`);
        });
        const described = `search(${JSON.stringify(syntax.query)}) returned ${describeResult(result, HOSTILE_CORPUS)}`;
        if (syntax.finds) expect(positionOf(result, syntax.finds), described).toBeGreaterThanOrEqual(0);
        if (syntax.notFound) expect(positionOf(result, syntax.notFound), described).toBe(-1);
        if (syntax.finds && syntax.before && positionOf(result, syntax.before) >= 0) {
          expect(positionOf(result, syntax.finds), described).toBeLessThan(positionOf(result, syntax.before));
        }
      });
    }

    check(suite, "after every hostile query the index is intact", needsSet, async () => {
      const provider = await withEntries(HOSTILE_CORPUS);
      for (const hostile of HOSTILE_QUERIES) await provider.search(hostile.query).catch(() => null);
      await expectFound(provider, "smoothie", HOSTILE_ENTRIES.smoothie, HOSTILE_CORPUS);
      expect(statesCount(await provider.get(), HOSTILE_CORPUS.length), "count after hostile queries").toBe(
        true,
      );
    });
  });
}

/** `null`, empty, or a summary whose numbers are all zero (or that says "no"/"zero"/"empty"). */
export function isEmptySummary(value: string | null): boolean {
  if (value === null || value.trim() === "") return true;
  const numbers = numbersIn(value);
  if (numbers.length > 0) return numbers.every((number) => number === 0);
  return /\b(no|zero|empty|none)\b/i.test(value);
}

/** A summary that states `count` (and, for a count of 1, not 2 or more). */
export function statesCount(value: string | null, count: number): boolean {
  if (typeof value !== "string") return false;
  const numbers = numbersIn(value);
  return numbers.includes(count) && !numbers.some((number) => number > count);
}
