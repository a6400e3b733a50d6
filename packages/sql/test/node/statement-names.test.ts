import { describe, expect, it } from "vitest";
import { maximumNamedTexts, statementName } from "../../src/statement-names.js";

// Prepared statement names are derived from the text; the bound keeps a connection from preparing without
// end. (The adapters that send them are tested against a real server in @contextblocks/postgres.)
describe("statementName", () => {
  it("gives a text the same name every time, and distinct texts distinct names, up to the bound", () => {
    const texts = Array.from({ length: maximumNamedTexts }, (_, index) => `SELECT ${index} AS n WHERE $1`);
    const names = texts.map((text) => statementName(text));
    expect(names.every((name) => name !== undefined && /^cb_[0-9a-f]{16}_\d+$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(maximumNamedTexts);
    expect(texts.map((text) => statementName(text))).toEqual(names);
    // Past the bound a new text goes unnamed; the named ones keep their names.
    expect(statementName("SELECT 'one text too many'")).toBeUndefined();
    expect(statementName(texts[0] as string)).toBe(names[0]);
  });
});
