import { ContextError } from "@contextblocks/core";
import { isWellFormed } from "@contextblocks/core/store-kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../../conformance/src/adversarial.js";
import { indexTable } from "../../src/schema.js";
import { keysOf, openProvider } from "../support/databases.js";

/**
 * Property test (issue 12): random set / replace / delete / get / search sequences on a real better-sqlite3
 * database agree with an in-memory model (a Map). A fixed seed in CI, a random one locally; fast-check
 * prints the seed and the shrunk sequence on failure.
 */
const settings = { numRuns: 150, ...(process.env.CI ? { seed: 12_082 } : {}) };

/** Distinct, non-stop words that no stemmer folds into one another, and that no filler or key contains. */
const WORDS = ["zebra", "mango", "quartz", "violin", "harbour", "copper", "falcon", "tundra"];

/** Text around the words: punctuation, scripts, invisible characters, structure-looking lines. */
const FILLERS = [
  "═══",
  "\u0000",
  "🥭",
  "«»",
  "東京",
  "\u200b",
  "\n",
  "\r\n",
  "'; DROP TABLE x; --",
  '"NEAR(',
  "*",
  ...ADVERSARIAL_TEXTS.filter((entry) => entry.category === "structure" && entry.wellFormed)
    .slice(0, 6)
    .map((entry) => entry.text),
];

const KEYS = ["k1", "k2", "k3", "", "ключ", "nul\u0000key", "key with spaces", "🔑"];

const text = fc
  .array(fc.oneof(fc.constantFrom(...WORDS), fc.constantFrom(...FILLERS)), { maxLength: 12 })
  .map((parts) => parts.join(" "));

type Operation =
  | { kind: "set"; key: string; content: string }
  | { kind: "delete"; key: string }
  | { kind: "get" }
  | { kind: "search"; word: string }
  | { kind: "bad"; key: string; content: string };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("set" as const), key: fc.constantFrom(...KEYS), content: text }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), key: fc.constantFrom(...KEYS) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "get" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("search" as const), word: fc.constantFrom(...WORDS) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bad" as const),
      key: fc.constantFrom("k1", "x\ud800", "\udc00"),
      content: fc.constantFrom("zebra \ud83d", "fine zebra"),
    }),
  },
);

describe("Fts5SearchProvider against an in-memory model", () => {
  it("random set, replace, delete, get and search sequences agree with a Map", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), async (operations) => {
        // Budgets wide enough that every match comes back whole (excerpts have their own tests).
        const { provider, database } = openProvider({
          keyOnlyBelow: 0,
          limit: 100,
          resultTokens: 1_000_000,
          searchTokens: 100_000_000,
        });
        const model = new Map<string, string>();
        expect(await provider.get()).toBeNull(); // opens the schema, so the final read finds the table
        for (const step of operations) {
          switch (step.kind) {
            case "set":
              await provider.set(step.key, step.content);
              model.set(step.key, step.content);
              break;
            case "delete":
              await provider.delete(step.key);
              model.delete(step.key);
              break;
            case "get":
              expect(await provider.get()).toBe(model.size === 0 ? null : `${model.size} entries indexed.`);
              break;
            case "search": {
              const expected = [...model].filter(([, content]) => content.split(/\s/).includes(step.word));
              const result = await provider.search(step.word);
              expect(new Set(keysOf(result))).toEqual(new Set(expected.map(([key]) => key)));
              for (const [key, content] of expected) expect(result).toContain(`[${key}]\n${content}`);
              break;
            }
            case "bad": {
              const wellFormed = isWellFormed(step.key + step.content);
              const outcome = await provider.set(step.key, step.content).then(
                () => null,
                (error: unknown) => error,
              );
              if (wellFormed) {
                expect(outcome).toBeNull();
                model.set(step.key, step.content);
              } else {
                expect(outcome).toBeInstanceOf(ContextError);
                expect((outcome as ContextError).code).toBe("INVALID_INPUT");
              }
              break;
            }
          }
        }
        // A sequence that never wrote (reads, refused writes) made no table: a read creates nothing.
        const laidOut =
          database.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").all(indexTable).length > 0;
        const stored = (laidOut ? database.prepare(`SELECT key, content FROM ${indexTable}`).all() : []) as {
          key: string;
          content: string;
        }[];
        expect(new Map(stored.map((row) => [row.key, row.content]))).toEqual(model);
        expect(stored).toHaveLength(model.size);
        database.close();
      }),
      settings,
    );
  }, 120_000);
});
