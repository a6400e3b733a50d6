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
  it("lists the session written last first, several writes in one request", async () => {
    await inObject("registry-write-order", async (state) => {
      const registry = new SqliteSessionRegistry(state.storage);
      for (const id of ["a", "b", "c"]) await registry.create(id, id.toUpperCase());
      await registry.update("a", { name: "Renamed" });
      expect((await registry.list()).map((row) => row.id)).toEqual(["a", "c", "b"]);
      await registry.touch("b");
      await registry.addUsage("c", 1, 1, 0);
      expect((await registry.list()).map((row) => row.id)).toEqual(["c", "b", "a"]);
      expect(registry.synchronous?.list({ limit: 1 }).map((row) => row.id)).toEqual(["c"]);
    });
  });

  it("list({ limit: 20 }) of 200 sessions returns the 20 most recently updated, and a session write still writes one row (no index on updated_at)", async () => {
    await inObject("registry-list-cost", async (state) => {
      const { registry, measure } = counted(state);
      for (let index = 0; index < 200; index++) await registry.create(`s${index}`, `Chat ${index}`);
      // s7 is moved ahead by hand, as a write from a later request would.
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
      // The touch after every message a manager session stores: one written row. An index on updated_at
      // would make it two, to save listing reads billed a thousandth of a write.
      const touch = await measure(() => registry.touch("s3"));
      console.log(JSON.stringify({ limited, whole, touch }));
      expect(listed).toEqual(expected);
      expect(all.slice(0, 20)).toEqual(expected);
      expect(all).toHaveLength(200);
      expect(limited.written).toBe(0);
      expect(touch.written).toBe(1);
    });
  });
});
