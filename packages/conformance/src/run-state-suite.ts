import type { RunStateStore } from "@contextblocks/sessions/store-kit";
import { expect } from "vitest";
import { type ContractSuiteOptions, contractSuite, refusedWith } from "./contract-suite.js";

/**
 * The run-state contract (`RunStateStore`, where a pipeline keeps its plugins' state per session): a JSON
 * round trip, copies on both sides, whole replacement on save, and sessions kept apart.
 */
export function describeRunStateStore<S extends RunStateStore>(
  name: string,
  factory: () => S | Promise<S>,
  options: ContractSuiteOptions<S> = {},
): void {
  contractSuite(`${name}: run state`, factory, options, (test) => {
    test("load is null for a session never saved, then what save stored, as JSON round-trips it", async (create) => {
      const store = await create();
      expect(await store.load("s")).toBeNull();
      const states = { history: { cursor: 3, ids: ["a", "b"] }, notes: { text: 'ünïcödé \u2028 "quoted"' } };
      await store.save("s", states);
      expect(await store.load("s")).toEqual(states);
    });

    test("a save replaces every plugin's state of the session; other sessions keep theirs", async (create) => {
      const store = await create();
      await store.save("one", { a: { n: 1 }, b: { n: 2 } });
      await store.save("two", { a: { n: 9 } });
      await store.save("one", { b: { n: 3 } });
      expect(await store.load("one")).toEqual({ b: { n: 3 } });
      expect(await store.load("two")).toEqual({ a: { n: 9 } });
    });

    test("saved and loaded states are copies", async (create) => {
      const store = await create();
      const states = { a: { list: [1] } };
      await store.save("s", states);
      states.a.list.push(2);
      const loaded = (await store.load("s")) as { a: { list: number[] } };
      expect(loaded).toEqual({ a: { list: [1] } });
      loaded.a.list.push(3);
      expect(await store.load("s")).toEqual({ a: { list: [1] } });
    });

    test("refuses (INVALID_INPUT) an empty session id, states that are not an object of objects, and a state JSON cannot hold, keeping what was saved", async (create) => {
      const store = await create();
      await store.save("s", { kept: { n: 1 } });
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      for (const attempt of [
        () => store.save("", { a: {} }),
        () => store.load(""),
        () => store.delete(""),
        () => store.save(42 as unknown as string, { a: {} }),
        () => store.save("s", null as never),
        () => store.save("s", [] as never),
        () => store.save("s", { a: 5 } as never),
        () => store.save("s", { a: [1] } as never),
        () => store.save("s", { kept: { n: 2 }, a: { big: 1n } }),
        () => store.save("s", { kept: { n: 2 }, a: cycle }),
        () => store.save("s", { kept: { n: 2 }, a: { toJSON: () => undefined } }),
        () =>
          store.save("s", {
            a: {
              get broken() {
                throw new Error("a getter that throws");
              },
            },
          }),
      ]) {
        const error = await refusedWith(attempt);
        expect(error.code, error.message).toBe("INVALID_INPUT");
      }
      expect(await store.load("s")).toEqual({ kept: { n: 1 } });
    });

    test('a source id "__proto__" is a key like any other, never the loaded object\'s prototype', async (create) => {
      const store = await create();
      await store.save("s", JSON.parse('{"__proto__": {"polluted": true}, "ok": {"n": 1}}'));
      const loaded = (await store.load("s")) as Record<string, unknown>;
      expect(Object.keys(loaded).sort()).toEqual(["__proto__", "ok"]);
      expect(Object.getPrototypeOf(loaded)).toBe(Object.prototype);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });

    test("delete forgets one session's state", async (create) => {
      const store = await create();
      await store.save("one", { a: {} });
      await store.save("two", { a: {} });
      await store.delete("one");
      await store.delete("never-saved");
      expect(await store.load("one")).toBeNull();
      expect(await store.load("two")).toEqual({ a: {} });
    });
  });
}
