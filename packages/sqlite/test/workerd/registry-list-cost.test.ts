import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteSessionRegistry } from "../../src/index.js";
import { inObject } from "./in-object.js";

/** A registry on the object's storage whose statements are counted; `measure` gives one call's rows. */
function counted(state: DurableObjectState) {
  const reports: StatementReport[] = [];
  const registry = new SqliteSessionRegistry(state.storage, {
    onStatement: (report) => reports.push(report),
  });
  const measure = async (run: () => Promise<unknown>) => {
    reports.length = 0;
    await run();
    return {
      read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
    };
  };
  return { registry, measure };
}

describe("listing sessions on a Durable Object", () => {
  it("list({ limit: 20 }) of 200 sessions reads about 20 rows (the index on updated_at), the most recently updated first", async () => {
    await inObject("registry-list-cost", async (state) => {
      const { registry, measure } = counted(state);
      for (let index = 0; index < 200; index++) await registry.create(`s${index}`, `Chat ${index}`);
      // Within one request the clock stands still: the rows tie on updated_at (then newest created first),
      // and s7 is moved ahead by hand, as a later write would.
      state.storage.sql.exec(
        "UPDATE assistant_sessions SET updated_at = '2999-01-01 00:00:00.000' WHERE id = 's7'",
      );
      const expected = ["s7", ...Array.from({ length: 19 }, (_, index) => `s${199 - index}`)];

      let listed: string[] = [];
      const limited = await measure(async () => {
        listed = (await registry.list({ limit: 20 })).map((row) => row.id);
      });
      let all: string[] = [];
      const whole = await measure(async () => {
        all = (await registry.list()).map((row) => row.id);
      });
      // What the index costs each registry write (one more row written: the index entry).
      const touch = await measure(() => registry.touch("s3"));
      const create = await measure(() => registry.create("new", "New"));
      console.log(JSON.stringify({ limited, whole, touch, create }));
      expect(listed).toEqual(expected);
      expect(all.slice(0, 20)).toEqual(expected);
      expect(all).toHaveLength(200);
      expect(limited.read).toBeLessThanOrEqual(22);
      expect(limited.written).toBe(0);
      expect(whole.read).toBeGreaterThanOrEqual(200);
    });
  });
});
