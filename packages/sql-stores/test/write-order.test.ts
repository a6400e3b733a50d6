import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqlSessionRegistry } from "../src/index.js";
import { writeTime } from "../src/write-clock.js";

describe("the order of sessions on SQLite", () => {
  it("lists the session written last first, however many writes share a millisecond", async () => {
    // Each round's writes take well under a millisecond: SQLite's own clock tied them (most rounds failed).
    for (let round = 0; round < 50; round++) {
      const registry = new SqlSessionRegistry(fromBetterSqlite3(new Database(":memory:")));
      for (const id of ["a", "b", "c"]) await registry.create(id, id.toUpperCase());
      await registry.update("a", { name: "Renamed" });
      expect((await registry.list()).map((row) => row.id)).toEqual(["a", "c", "b"]);
      await registry.touch("b");
      expect((await registry.list()).map((row) => row.id)).toEqual(["b", "a", "c"]);
    }
  });

  it("hands out times a millisecond apart at least, per client, spelled as SQLite's strftime spells them", () => {
    const first = {};
    const times = Array.from({ length: 5 }, () => writeTime(first));
    expect(new Set(times).size).toBe(5);
    expect([...times].sort()).toEqual(times);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    // Another client starts from its own clock, not after the first one's.
    expect(Date.parse(`${writeTime({}).replace(" ", "T")}Z`)).toBeLessThanOrEqual(Date.now());
  });
});
