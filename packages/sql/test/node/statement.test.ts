import { describe, expect, it } from "vitest";
import { sql } from "../../src/index.js";
import { buildStatement, isSqlStatement, limitLiteral, statementText } from "../../src/store-kit.js";

describe("sql tag", () => {
  it("keeps values out of the text", () => {
    const label = "x'; DROP TABLE t; --";
    const statement = sql`SELECT content FROM t WHERE label = ${label} AND n > ${3}`;
    expect(statement.strings).toEqual(["SELECT content FROM t WHERE label = ", " AND n > ", ""]);
    expect(statement.values).toEqual([label, 3]);
    expect(statementText(statement, "sqlite")).toBe("SELECT content FROM t WHERE label = ? AND n > ?");
    expect(statementText(statement, "postgres")).toBe("SELECT content FROM t WHERE label = $1 AND n > $2");
  });

  it("splices nested statements as fragments with their values still bound", () => {
    const where = sql`label = ${"a"} OR label = ${"b"}`;
    const statement = sql`SELECT * FROM t WHERE (${where}) AND n = ${1}`;
    expect(statementText(statement, "sqlite")).toBe(
      "SELECT * FROM t WHERE (label = ? OR label = ?) AND n = ?",
    );
    expect(statement.values).toEqual(["a", "b", 1]);
    expect(statementText(statement, "postgres")).toBe(
      "SELECT * FROM t WHERE (label = $1 OR label = $2) AND n = $3",
    );
  });

  it("splices a fragment without values", () => {
    const statement = sql`SELECT ${sql`1 AS one`}, ${2} AS two`;
    expect(statementText(statement, "sqlite")).toBe("SELECT 1 AS one, ? AS two");
    expect(statement.values).toEqual([2]);
  });

  it("refuses undefined and objects with an error naming the position", () => {
    expect(() => sql`SELECT ${1}, ${undefined as unknown as null}`).toThrow(
      /value 2 is undefined; bind null/,
    );
    expect(() => sql`SELECT ${{} as unknown as string}`).toThrow(/value 1 is an object/);
  });

  it("refuses mismatched parts", () => {
    expect(() => buildStatement(["a", "b"], [])).toThrow(TypeError);
  });

  it("recognises statements and nothing else", () => {
    expect(isSqlStatement(sql`SELECT 1`)).toBe(true);
    expect(isSqlStatement({ strings: ["a"], values: [1] })).toBe(false);
    expect(isSqlStatement(new Uint8Array(2))).toBe(false);
    expect(isSqlStatement(null)).toBe(false);
  });

  it("keeps the template's parts, so the statement text is built once per call site and dialect", () => {
    const select = (label: string) => sql`SELECT content FROM blocks WHERE label = ${label}`;
    const first = select("a");
    const second = select("b");
    expect(second.strings).toBe(first.strings);
    expect(second.values).toEqual(["b"]);
    expect(statementText(first, "sqlite")).toBe("SELECT content FROM blocks WHERE label = ?");
    expect(statementText(second, "postgres")).toBe("SELECT content FROM blocks WHERE label = $1");
    expect(statementText(second, "sqlite")).toBe("SELECT content FROM blocks WHERE label = ?");
    // With a fragment the parts are new, and the text still right.
    const spliced = sql`SELECT ${sql`content`} FROM blocks WHERE label = ${"a"}`;
    expect(statementText(spliced, "postgres")).toBe("SELECT content FROM blocks WHERE label = $1");
  });
});

describe("limitLiteral", () => {
  it("writes a whole number of rows into the text, binding nothing", () => {
    const statement = sql`SELECT 1 FROM t WHERE n > ${2} LIMIT ${limitLiteral(40)}`;
    expect(statementText(statement, "sqlite")).toBe("SELECT 1 FROM t WHERE n > ? LIMIT 40");
    expect(statementText(statement, "postgres")).toBe("SELECT 1 FROM t WHERE n > $1 LIMIT 40");
    expect(statement.values).toEqual([2]);
    expect(statementText(sql`LIMIT ${limitLiteral(0)}`, "sqlite")).toBe("LIMIT 0");
  });

  it("refuses anything but a safe whole number, so no other text reaches the statement", () => {
    for (const bad of [
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      "10; DROP TABLE t" as unknown,
    ]) {
      expect(() => limitLiteral(bad as number)).toThrow(/limitLiteral: expected a whole number of rows/);
    }
  });
});
