import { isContextError } from "@contextblocks/core";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import { expect, it } from "vitest";
import { SqliteContextProvider, SqliteRunStateStore } from "../../src/index.js";
import { sqliteTree } from "../sqlite-tree.js";
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

it("on a Durable Object: versions kept in the block's row stay under the row limit, whatever the text", async () => {
  await inObject("row-size-recent", async (state) => {
    const options = { label: "notes", versions: { retention: 50 } };
    // Content of 8 KiB (the longest kept in the row) that JSON escapes to six bytes a character.
    const content = (index: number) => `${index}`.padEnd(8 * 1024, "\u0001");
    const same = new SqliteContextProvider(state.storage, options);
    for (let index = 0; index < 40; index++) await same.set(content(index));
    // A store made for every write (a Durable Object woken for each), and two stores taking turns.
    for (let index = 40; index < 80; index++)
      await new SqliteContextProvider(state.storage, options).set(content(index));
    const other = new SqliteContextProvider(state.storage, options);
    for (let index = 80; index < 120; index++) await (index % 2 === 0 ? same : other).set(content(index));
    const versions = (await same.versions?.()) ?? [];
    expect(versions.map((version) => version.content)).toEqual(
      Array.from({ length: 50 }, (_, at) => content(119 - at)),
    );
    const row = state.storage.sql
      .exec("SELECT length(CAST(history_recent AS BLOB)) AS bytes FROM cf_agents_context_blocks")
      .one();
    expect(Number(row.bytes)).toBeLessThan(2_000_000);
  });
});

it("on a Durable Object: a compaction summary up to the limit is stored whole, past it refused by name", async () => {
  for (const layout of ["keyed", "lean"] as const) {
    await inObject(`row-size-summary-${layout}`, async (state) => {
      const store = sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: layout });
      for (const id of ["a", "b", "c"]) {
        await store.appendMessage({ id, role: "user", parts: [{ type: "text", text: `text ${id}` }] });
      }
      // Without the check this is SQLite's bare "string or blob too big: SQLITE_TOOBIG".
      await refusedByName(() => store.addCompaction("s".repeat(maxRowBytes), "a", "b"));
      expect(await store.getCompactions()).toEqual([]);
      const summary = "s".repeat(maxRowBytes - 200);
      await store.addCompaction(summary, "a", "b");
      const history = await store.getHistory();
      expect(history.map((message) => message.id).slice(1)).toEqual(["c"]);
      expect(history[0]?.parts).toEqual([{ type: "text", text: summary }]);
    });
  }
});
