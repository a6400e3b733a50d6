import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
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

  it("lists the session written last first when two clients of one database write (one clock per database)", async () => {
    const database = new Database(":memory:");
    // Each with its own onStatement: two clients, as an Agent's sql and its ctx.storage are.
    const first = new SqlSessionRegistry(fromBetterSqlite3(database, { onStatement: () => {} }));
    const second = new SqlSessionRegistry(fromBetterSqlite3(database, { onStatement: () => {} }));
    // A clock that stands still, as a Durable Object's does while its code runs: the first client's writes
    // step ahead of Date.now().
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.parse("2026-12-05T10:00:00Z"));
    try {
      for (let index = 0; index < 20; index++) await first.create(`bulk-${index}`, "bulk");
      await second.create("last", "written last");
      expect((await first.list({ limit: 2 })).map((row) => row.id)).toEqual(["last", "bulk-19"]);
      await first.update("bulk-0", { name: "renamed last" });
      expect((await second.list({ limit: 2 })).map((row) => row.id)).toEqual(["bulk-0", "last"]);
    } finally {
      now.mockRestore();
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
