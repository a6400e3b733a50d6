import { ContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { keysOf, memoryDatabase, openProvider } from "../support/databases.js";

/** Notes where a three-word query matches one entry fully and the others by one common word. */
async function runbooks(options = {}) {
  const { provider } = openProvider(options);
  await provider.set(
    "rotate-billing-db",
    "To rotate the billing database credentials, run the vault job first.",
  );
  for (let index = 0; index < 6; index++) {
    await provider.set(
      `billing-${index}`,
      `Billing invoices for region ${index} are sent on the first Monday.`,
    );
  }
  return provider;
}

describe("weak matches (scores far below the best)", () => {
  it("come back as their key and a few words by default: every key is listed, only strong matches cost a full excerpt", async () => {
    const provider = await runbooks();
    const result = await provider.search("rotate billing database");
    expect(keysOf(result)).toHaveLength(7);
    expect(keysOf(result)[0]).toBe("rotate-billing-db");
    expect(result).toContain("[rotate-billing-db]\nTo rotate the billing database credentials");
    expect(result).toContain("[billing-0]\nBilling invoices for…\n\n");
    expect(result).not.toContain("first Monday");
    // weakResultTokens: 0 leaves such a match its key alone.
    const keysAlone = await (await runbooks({ weakResultTokens: 0 })).search("rotate billing database");
    expect(keysAlone).toContain("[billing-0]\n\n");
    expect(keysAlone).not.toContain("invoices");
    // Searching such a key returns it whole.
    expect(
      (await provider.search("[billing-3]"))?.startsWith("[billing-3]\nBilling invoices for region 3"),
    ).toBe(true);
  });

  it("keyOnlyBelow: 0 shows every result's text; when all match alike, all keep their text", async () => {
    const everything = await runbooks({ keyOnlyBelow: 0 });
    expect(await everything.search("rotate billing database")).toContain("invoices");
    const provider = await runbooks();
    // "invoices" matches the six alike: none is weak.
    expect((await provider.search("invoices"))?.match(/Billing invoices/g)).toHaveLength(6);
  });

  it("weakResultTokens gives each weak match a short excerpt around its matched word", async () => {
    const provider = await runbooks({ weakResultTokens: 8 });
    const result = await provider.search("rotate billing database");
    expect(keysOf(result)).toHaveLength(7);
    expect(result).toContain("[rotate-billing-db]\nTo rotate the billing database credentials");
    // About 8 tokens (28 characters) around "billing", cut at spaces, `…` where text was left out.
    expect(result).toContain("[billing-0]\nBilling invoices for region…\n\n");
    expect(result).not.toContain("first Monday");
    // 0 keeps the key alone; more than resultTokens, or not an integer, is refused.
    expect(await (await runbooks({ weakResultTokens: 0 })).search("rotate billing database")).toContain(
      "[billing-0]\n\n",
    );
    for (const weakResultTokens of [-1, 41, 2.5]) {
      expect(() => new Fts5SearchProvider(memoryDatabase(), { label: "x", weakResultTokens })).toThrow(
        /weakResultTokens must be an integer from 0 to resultTokens \(40\)/,
      );
    }
  });

  it("dropBelow leaves weak matches out", async () => {
    const provider = await runbooks({ dropBelow: 0.5 });
    expect(keysOf(await provider.search("rotate billing database"))).toEqual(["rotate-billing-db"]);
    expect(keysOf(await provider.search("billing"))).toHaveLength(7);
  });

  it("refuses shares outside 0 to 1 with INVALID_CONFIG", () => {
    for (const options of [{ keyOnlyBelow: 1.5 }, { dropBelow: -0.1 }, { keyOnlyBelow: Number.NaN }]) {
      expect(() => new Fts5SearchProvider(memoryDatabase(), { label: "x", ...options })).toThrow(
        ContextError,
      );
    }
    expect(() => new Fts5SearchProvider(memoryDatabase(), { label: "x", dropBelow: 2 })).toThrow(
      /dropBelow must be a number from 0 to 1/,
    );
  });
});
