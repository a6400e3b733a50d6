import { describe, expect, it } from "vitest";
import { sql } from "../../src/index.js";
import { raw, statementShapes, statementText } from "../../src/store-kit.js";

type Values = { query: string; session: string | undefined };

/** A statement whose text follows from `weight` and whether a session is given. */
function counted() {
  let builds = 0;
  const build =
    (weight: number) =>
    ({ query, session }: Values) => {
      builds++;
      return sql`SELECT id FROM t WHERE t MATCH ${query} AND w > ${raw(String(weight))}${
        session === undefined ? sql`` : sql` AND session = ${session}`
      } ORDER BY ${raw("rank")}`;
    };
  return { build, builds: () => builds };
}

describe("statementShapes", () => {
  it("builds a key's statement once and binds each call's values in it, its parts reused", () => {
    const shapes = statementShapes<Values>();
    const { build, builds } = counted();
    const first = shapes("w1", { query: "a", session: "s1" }, build(1));
    const second = shapes("w1", { query: "b", session: "s2" }, build(1));
    expect(builds()).toBe(1);
    expect(second.strings).toBe(first.strings);
    expect(statementText(second, "sqlite")).toBe(
      "SELECT id FROM t WHERE t MATCH ? AND w > 1 AND session = ? ORDER BY rank",
    );
    expect(first.values).toEqual(["a", "s1"]);
    expect(second.values).toEqual(["b", "s2"]);
    // Another key is another statement.
    const other = shapes("w2", { query: "c", session: "s3" }, build(2));
    expect(statementText(other, "sqlite")).toContain("w > 2");
    expect(other.values).toEqual(["c", "s3"]);
  });

  it("keeps a statement per set of absent values: a build may leave a clause out for one", () => {
    const shapes = statementShapes<Values>();
    const { build } = counted();
    shapes("w1", { query: "a", session: "s1" }, build(1));
    const alone = shapes("w1", { query: "b", session: undefined }, build(1));
    expect(statementText(alone, "sqlite")).toBe("SELECT id FROM t WHERE t MATCH ? AND w > 1 ORDER BY rank");
    expect(alone.values).toEqual(["b"]);
    const again = shapes("w1", { query: "c", session: "s2" }, build(1));
    expect(again.values).toEqual(["c", "s2"]);
  });

  it("builds every time a statement that binds anything but the named values, or writes one into its text", () => {
    const shapes = statementShapes<Values>();
    let builds = 0;
    const computed = ({ query }: Values) => {
      builds++;
      return sql`SELECT ${query}, ${query.length}`;
    };
    expect(shapes("k", { query: "ab", session: undefined }, computed).values).toEqual(["ab", 2]);
    expect(shapes("k", { query: "abc", session: undefined }, computed).values).toEqual(["abc", 3]);
    expect(builds).toBe(3);
    const written = ({ query }: Values) => raw(`SELECT '${query}'`);
    expect(statementText(shapes("t", { query: "x", session: undefined }, written), "sqlite")).toBe(
      "SELECT 'x'",
    );
    expect(statementText(shapes("t", { query: "y", session: undefined }, written), "sqlite")).toBe(
      "SELECT 'y'",
    );
  });

  it("keeps at most `limit` keys", () => {
    const shapes = statementShapes<Values>(2);
    const { build, builds } = counted();
    for (const key of ["a", "b", "c", "a"]) shapes(key, { query: "q", session: undefined }, build(1));
    // "c" passed the limit and cleared the cache, so "a" was built again.
    expect(builds()).toBe(4);
  });
});
