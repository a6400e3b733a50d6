import { isContextError } from "@contextblocks/core";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import { expect, it } from "vitest";
import { SqliteContextProvider, SqliteRunStateStore } from "../../src/index.js";
import { inObject } from "./in-object.js";

async function refusedByName(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  // Without the check this is SQLite's bare "string or blob too big: SQLITE_TOOBIG".
  expect(isContextError(error) && error.code === "INVALID_INPUT").toBe(true);
  expect((error as Error).message).toContain("a stored row holds at most 2,000,000");
}

it("on a Durable Object: a block and a run state up to the limit are stored whole, past it refused by name", async () => {
  await inObject("row-size", async (state) => {
    const memory = new SqliteContextProvider(state.storage, { label: "memory", versions: true });
    const large = "é".repeat((maxRowBytes - "memory".length) / 2);
    await memory.set(large);
    await memory.set(`${large.slice(1)}a`); // a second version: the history keeps the first
    expect(await memory.get()).toBe(`${large.slice(1)}a`);
    await refusedByName(() => memory.set(`${large}a`));
    expect(await memory.get()).toBe(`${large.slice(1)}a`);

    const states = new SqliteRunStateStore(state.storage);
    const note = "n".repeat(maxRowBytes - 100);
    await states.save("s", { plugin: { note } });
    expect(await states.load("s")).toEqual({ plugin: { note } });
    await refusedByName(() => states.save("s", { plugin: { note: `${note}${"n".repeat(100)}` } }));
    expect(await states.load("s")).toEqual({ plugin: { note } });
  });
});
