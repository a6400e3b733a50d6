import { ContextBlocks } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import type { Fts5SearchProvider } from "../../src/index.js";
import { keysOf, openProvider } from "../support/databases.js";

/**
 * A document cut into chunks: each chunk is an entry, and the document's title and the chunk's section are
 * its context (searched at a lower weight, never returned).
 */
const handbook = "Employee handbook";
const chunks: { key: string; section: string; content: string }[] = [
  {
    key: "handbook-3",
    section: "Parental leave",
    content: "You may take up to sixteen weeks, paid at full salary for the first ten.",
  },
  {
    key: "handbook-4",
    section: "Travel expenses",
    content: "Book trains rather than flights for trips under five hours; keep every receipt.",
  },
  {
    key: "handbook-5",
    section: "Working from abroad",
    content: "Up to four weeks a year with your manager's approval; tell payroll before you go.",
  },
  {
    key: "handbook-6",
    section: "Sick leave",
    content: "Call in before ten; from the third day we need a doctor's note. Leave starts the day you call.",
  },
];

async function indexHandbook(
  withContext: boolean,
  options: { keyOnlyBelow?: number } = {},
): Promise<Fts5SearchProvider> {
  const { provider } = openProvider(options);
  for (const chunk of chunks) {
    await provider.set(
      chunk.key,
      chunk.content,
      withContext ? { context: `${handbook} > ${chunk.section}` } : undefined,
    );
  }
  // Other documents that share the query's everyday words.
  await provider.set("faq-1", "How many weeks of holiday do new starters get? Twenty-five days.");
  await provider.set("faq-2", "Parents can bring children to the summer party.");
  return provider;
}

describe("per-entry context", () => {
  it("finds a chunk whose own words miss the query through its section title", async () => {
    const question = "how long is parental leave?";
    // Without context the chunk's own text shares no word with the question ("leave" is in another chunk).
    const bare = keysOf(await (await indexHandbook(false)).search(question));
    expect(bare).not.toContain("handbook-3");
    const withContext = keysOf(await (await indexHandbook(true)).search(question));
    expect(withContext[0]).toBe("handbook-3");
  });

  it("never returns the context: results show the content only", async () => {
    // Every result with its text (weak matches have their own tests).
    const provider = await indexHandbook(true, { keyOnlyBelow: 0 });
    const result = await provider.search("parental leave");
    expect(result).not.toBeNull();
    expect(result).not.toContain("Employee handbook");
    expect(result).not.toContain("Parental leave");
    expect(result).toContain(
      "[handbook-3]\nYou may take up to sixteen weeks, paid at full salary for the first ten.",
    );
    // Asking for the key returns the entry whole, still without its context.
    const whole = await provider.search("[handbook-3]");
    expect(
      whole?.startsWith(
        "[handbook-3]\nYou may take up to sixteen weeks, paid at full salary for the first ten.\n\n",
      ),
    ).toBe(true);
    expect(whole).not.toContain("handbook >");
  });

  it("ranks a match in the content above the same match in the context", async () => {
    const { provider } = openProvider();
    await provider.set("in-context", "Trains run every hour.", { context: "Timetable for the ferry" });
    await provider.set("in-content", "The ferry runs every hour.", { context: "Timetable" });
    expect(keysOf(await provider.search("ferry"))).toEqual(["in-content", "in-context"]);
  });

  it("a set of the same content with another context replaces it; without context removes it", async () => {
    const { provider } = openProvider();
    await provider.set("chunk", "Sixteen weeks, paid in full for ten.", { context: "Parental leave" });
    await provider.set("chunk", "Sixteen weeks, paid in full for ten.", { context: "Adoption leave" });
    expect(await provider.search("parental")).toBeNull();
    expect(keysOf(await provider.search("adoption"))).toEqual(["chunk"]);
    await provider.set("chunk", "Sixteen weeks, paid in full for ten.");
    expect(await provider.search("adoption")).toBeNull();
    expect(await provider.get()).toBe("1 entries indexed.");
  });

  it("refuses a context SQLite would change, and an options value that is not an object", async () => {
    const { provider } = openProvider();
    await expect(provider.set("a", "b", { context: "lone \ud800 surrogate" })).rejects.toThrow(
      /options\.context/,
    );
    await expect(provider.set("a", "b", 7 as unknown as { context: string })).rejects.toThrow(
      /options must be an object/,
    );
    expect(await provider.get()).toBeNull();
  });

  it("ContextBlocks.setEntry's description (a string third argument) is accepted and not indexed", async () => {
    const { provider } = openProvider();
    const context = new ContextBlocks([{ label: "knowledge", description: "Notes", provider }]);
    await context.setEntry("knowledge", "tea", "Green sencha wants water at 75 degrees.", "About brewing");
    expect(keysOf(await provider.search("sencha"))).toEqual(["tea"]);
    expect(await provider.search("brewing")).toBeNull();
  });
});
