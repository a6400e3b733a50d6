import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { keysOf, memoryDatabase } from "../support/databases.js";

describe.each(["rank", "bm25"] as const)(
  "a label alone in its database, then joined by another (sort %s)",
  (sort) => {
    it("never returns another label's entries and still fills the limit, in every placement", async () => {
      const database = memoryDatabase();
      const statements: string[] = [];
      const knowledge = new Fts5SearchProvider(database, {
        label: "knowledge",
        limit: 5,
        sort,
        onStatement: ({ text }) => statements.push(text),
      });
      for (let index = 0; index < 8; index++) await knowledge.set(`own-${index}`, `Harbour note ${index}.`);
      // Alone: the best rows are ranked without the scope filter, then checked.
      expect(keysOf(await knowledge.search("harbour"))).toHaveLength(5);
      expect(statements.some(unfiltered)).toBe(true);
      // Another label writes stronger matches after the share was read (it is read again only every 16 searches).
      const other = new Fts5SearchProvider(database, { label: "other", sort });
      for (let index = 0; index < 8; index++) await other.set(`foreign-${index}`, "Harbour harbour harbour.");
      statements.length = 0;
      const keys = keysOf(await knowledge.search("harbour"));
      expect(keys).toHaveLength(5);
      expect(keys.every((key) => key.startsWith("own-"))).toBe(true);
      // The unfiltered ranking found the other label's rows, so the search ran again with the filter.
      expect(statements.filter((text) => text.includes("MATCH")).length).toBe(2);
      // From then on the share is read again and the filter is used directly.
      statements.length = 0;
      expect(keysOf(await knowledge.search("harbour")).every((key) => key.startsWith("own-"))).toBe(true);
      expect(statements.some(unfiltered)).toBe(false);
      expect(keysOf(await other.search("harbour")).every((key) => key.startsWith("foreign-"))).toBe(true);
    });
  },
);

/** The search statement without the scope filter (the one a label alone in its database runs first). */
function unfiltered(text: string): boolean {
  return text.includes("MATCH") && text.includes("ORDER BY") && !text.includes("scope =");
}
