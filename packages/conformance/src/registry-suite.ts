import { maximumSessionTextLength, type SessionRegistry } from "@contextblocks/sessions/store-kit";
import { expect } from "vitest";
import { type ContractSuiteOptions, contractSuite, refusedWith } from "./contract-suite.js";

/**
 * The session registry contract (`SessionRegistry`, what `SessionManager` lists): rows with agents'
 * `assistant_sessions` column names, newest update first, usage counters, and the refusals every registry
 * makes alike.
 */
export function describeSessionRegistry<R extends SessionRegistry>(
  name: string,
  factory: () => R | Promise<R>,
  options: ContractSuiteOptions<R> = {},
): void {
  contractSuite(`${name}: session registry`, factory, options, (test) => {
    test("create returns the row get reads back, with agents' column names and zeroed usage", async (create) => {
      const registry = await create();
      const row = await registry.create("s1", "First", { parentSessionId: "s0", model: "m", source: "web" });
      expect(row).toMatchObject({
        id: "s1",
        name: "First",
        parent_session_id: "s0",
        model: "m",
        source: "web",
        input_tokens: 0,
        output_tokens: 0,
        estimated_cost: 0,
        end_reason: null,
      });
      expect(typeof row.created_at).toBe("string");
      expect(await registry.get("s1")).toEqual(row);
      expect(await registry.get("missing")).toBeNull();
    });

    test("list is newest update first; update, touch and addUsage move a row to the front", async (create) => {
      const registry = await create();
      for (const id of ["a", "b", "c"]) await registry.create(id, id.toUpperCase());
      expect((await registry.list()).map((row) => row.id)).toEqual(["c", "b", "a"]);
      await registry.update("a", { name: "Renamed" });
      expect((await registry.list()).map((row) => row.id)).toEqual(["a", "c", "b"]);
      await registry.touch("b");
      expect((await registry.list()).map((row) => row.id)).toEqual(["b", "a", "c"]);
      await registry.addUsage("c", 10, 5, 0.25);
      await registry.addUsage("c", 1, 2, 0.5);
      const [first] = await registry.list();
      expect(first).toMatchObject({ id: "c", input_tokens: 11, output_tokens: 7, estimated_cost: 0.75 });
      expect((await registry.get("a"))?.name).toBe("Renamed");
      await registry.update("a", { endReason: "done" });
      expect((await registry.get("a"))?.end_reason).toBe("done");
    });

    test("list({ limit }) gives the first `limit` rows of the same order; a limit that is not a whole number from 1 to 1,000 is refused (INVALID_INPUT naming it)", async (create) => {
      const registry = await create();
      for (const id of ["a", "b", "c", "d", "e"]) await registry.create(id, id.toUpperCase());
      await registry.update("b", { name: "Renamed" });
      const order = ["b", "e", "d", "c", "a"];
      expect((await registry.list()).map((row) => row.id)).toEqual(order);
      for (const limit of [1, 2, 4, 5, 1_000]) {
        expect((await registry.list({ limit })).map((row) => row.id)).toEqual(order.slice(0, limit));
      }
      expect((await registry.list({})).map((row) => row.id)).toEqual(order);
      expect((await registry.list({ limit: 2 }))[0]).toMatchObject({ id: "b", name: "Renamed" });
      for (const bad of [0, -1, 1.5, 1_001, Number.NaN, Number.POSITIVE_INFINITY, "2", null]) {
        const error = await refusedWith(() => registry.list({ limit: bad as number }));
        expect(error.code).toBe("INVALID_INPUT");
        expect(error.message).toContain("limit");
      }
    });

    test("refuses an existing id (INVALID_INPUT), an unknown id to update (NOT_FOUND) and usage that is not a finite number ≥ 0", async (create) => {
      const registry = await create();
      await registry.create("s", "One");
      await registry.addUsage("s", 10, 5, 0.25);
      expect((await refusedWith(() => registry.create("s", "Again"))).code).toBe("INVALID_INPUT");
      expect((await refusedWith(() => registry.update("nobody", { name: "x" }))).code).toBe("NOT_FOUND");
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1, "3" as unknown as number]) {
        expect((await refusedWith(() => registry.addUsage("s", bad, 0, 0))).code).toBe("INVALID_INPUT");
        expect((await refusedWith(() => registry.addUsage("s", 0, bad, 0))).code).toBe("INVALID_INPUT");
        expect((await refusedWith(() => registry.addUsage("s", 0, 0, bad))).code).toBe("INVALID_INPUT");
      }
      expect(await registry.get("s")).toMatchObject({
        name: "One",
        input_tokens: 10,
        output_tokens: 5,
        estimated_cost: 0.25,
      });
    });

    test("refuses a lone UTF-16 surrogate in an id, a name, a model, a source or an end reason (INVALID_INPUT), changing nothing", async (create) => {
      const registry = await create();
      await registry.create("s", "One");
      const lone = "broken \uD800 text";
      for (const attempt of [
        () => registry.create(lone, "Name"),
        () => registry.create("t", lone),
        () => registry.create("t", "Name", { model: lone }),
        () => registry.create("t", "Name", { source: lone }),
        () => registry.update("s", { name: lone }),
        () => registry.update("s", { name: "Changed", endReason: lone }),
      ]) {
        expect((await refusedWith(attempt)).code).toBe("INVALID_INPUT");
      }
      expect((await registry.list()).map((row) => [row.id, row.name, row.end_reason])).toEqual([
        ["s", "One", null],
      ]);
    });

    test(`refuses an id, a name, a model, a source or an end reason over ${maximumSessionTextLength} characters (INVALID_INPUT naming the field), changing nothing; one of exactly ${maximumSessionTextLength} is kept`, async (create) => {
      const registry = await create();
      await registry.create("s", "One");
      // A 3 MB name would be listed on every page load (and is over a Durable Object row's 2 MB).
      const over = "n".repeat(maximumSessionTextLength + 1);
      for (const [attempt, field] of [
        [() => registry.create(over, "Name"), "id"],
        [() => registry.create("t", over), "name"],
        [() => registry.create("t", "x".repeat(3 * 1024 * 1024)), "name"],
        [() => registry.create("t", "Name", { parentSessionId: over }), "parentSessionId"],
        [() => registry.create("t", "Name", { model: over }), "model"],
        [() => registry.create("t", "Name", { source: over }), "source"],
        [() => registry.update("s", { name: over }), "name"],
        [() => registry.update("s", { name: "Changed", endReason: over }), "endReason"],
      ] as const) {
        const error = await refusedWith(attempt);
        expect(error.code).toBe("INVALID_INPUT");
        expect(error.message).toContain(field);
        expect(error.message.length).toBeLessThan(1_000);
      }
      expect((await registry.list()).map((row) => [row.id, row.name, row.end_reason])).toEqual([
        ["s", "One", null],
      ]);
      const longest = "l".repeat(maximumSessionTextLength);
      await registry.create(longest, longest, { model: longest, source: longest, parentSessionId: longest });
      await registry.update(longest, { name: longest, endReason: longest });
      expect(await registry.get(longest)).toMatchObject({
        name: longest,
        model: longest,
        end_reason: longest,
      });
    });

    test("where it answers at once (`synchronous`): the same rows and refusals as its async methods, each seeing the other's writes", async (create, skip) => {
      const registry = await create();
      const now = registry.synchronous;
      if (now === undefined) return skip("the registry does not answer at once (no `synchronous`)");
      const row = now.create("s1", "First", { model: "m" });
      expect(await registry.get("s1")).toEqual(row);
      await registry.create("s2", "Second");
      expect(now.get("s2")).toEqual(await registry.get("s2"));
      expect(now.get("missing")).toBeNull();
      now.update("s1", { name: "Renamed" });
      now.addUsage("s1", 3, 4, 0.5);
      expect(now.list()).toEqual(await registry.list());
      expect(now.list({ limit: 1 })).toEqual([
        expect.objectContaining({ id: "s1", name: "Renamed", input_tokens: 3 }),
      ]);
      const refusals: [() => unknown, string][] = [
        [() => now.create("s1", "Again"), "INVALID_INPUT"],
        [() => now.create("t", "n".repeat(maximumSessionTextLength + 1)), "INVALID_INPUT"],
        [() => now.update("nobody", { name: "x" }), "NOT_FOUND"],
        [() => now.addUsage("s1", Number.NaN, 0, 0), "INVALID_INPUT"],
        [() => now.list({ limit: 0 }), "INVALID_INPUT"],
      ];
      for (const [attempt, code] of refusals) {
        expect(attempt).toThrow(expect.objectContaining({ code }));
      }
      expect((await registry.list()).map((each) => [each.id, each.name, each.input_tokens])).toEqual([
        ["s1", "Renamed", 3],
        ["s2", "Second", 0],
      ]);
    });

    test("touch and addUsage of an unknown id change nothing; delete removes only its row", async (create) => {
      const registry = await create();
      await registry.create("keep", "Keep");
      await registry.create("drop", "Drop");
      await registry.touch("unknown");
      await registry.addUsage("unknown", 1, 1, 1);
      await registry.delete("drop");
      await registry.delete("never-existed");
      expect((await registry.list()).map((row) => row.id)).toEqual(["keep"]);
    });
  });
}
