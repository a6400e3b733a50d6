import { isContextError } from "@contextblocks/core";
import { fromBetterSqlite3, type SqlClient } from "@contextblocks/sql";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { SqlContextProvider, SqlRunStateStore, SqlSessionRegistry, SqlSkillProvider } from "../src/index.js";

let client: SqlClient;
beforeEach(() => {
  client = fromBetterSqlite3(new Database(":memory:"));
});

/** What `call` threw: an `INVALID_INPUT` ContextError whose message names the size and the limit. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  const error = await call().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(isContextError(error) && error.code === "INVALID_INPUT").toBe(true);
  const message = (error as Error).message;
  expect(message).toContain("2,000,000");
  return message;
}

// Two bytes a character: under the limit in UTF-16 units, over it in the bytes SQLite stores.
const oversized = "é".repeat(maxRowBytes / 2 + 1);

describe("rows over 2 MB (what a Durable Object's SQLite refuses) are refused on every SQLite", () => {
  it("a block: set and setIf refuse, and the stored content stays", async () => {
    const memory = new SqlContextProvider(client, "memory");
    await memory.set("Ada likes tea.");
    expect(await refusal(() => memory.set(oversized))).toMatch(
      /content of "memory" with its row's other text is 2,000,00\d bytes/,
    );
    await refusal(() => memory.setIf("Ada likes tea.", oversized));
    expect(await memory.get()).toBe("Ada likes tea.");
    // Just under the limit is stored whole.
    const large = "x".repeat(maxRowBytes - "memory".length);
    await memory.set(large);
    expect(await memory.get()).toBe(large);
  });

  it("a name as long as the row is quoted clipped: the refusal does not repeat megabytes back", async () => {
    // A namespaced label can carry a client's session id (Cloudflare agents' `memory_<session>`).
    const label = `memory_${"x".repeat(maxRowBytes)}`;
    const memory = new SqlContextProvider(client, label);
    const message = await refusal(() => memory.set("hi"));
    expect(message).toMatch(/content of "memory_x+…" with its row's other text/);
    expect(message.length).toBeLessThan(400);
    const skills = new SqlSkillProvider(client, "skills");
    expect((await refusal(() => skills.set("k".repeat(maxRowBytes), "hi"))).length).toBeLessThan(400);
    const states = new SqlRunStateStore(client);
    expect((await refusal(() => states.save("s", { ["p".repeat(maxRowBytes)]: {} }))).length).toBeLessThan(
      400,
    );
  });

  it("a skill and a run state are refused the same way, nothing written; a session's name sooner, at 1,024 characters", async () => {
    const skills = new SqlSkillProvider(client, "skills");
    await refusal(() => skills.set("deploy", oversized));
    expect(await skills.get()).toBeNull();
    const states = new SqlRunStateStore(client);
    await states.save("s", { plugin: { note: "small" } });
    await refusal(() => states.save("s", { plugin: { note: oversized } }));
    expect(await states.load("s")).toEqual({ plugin: { note: "small" } });
    const registry = new SqlSessionRegistry(client);
    await expect(registry.create("s", oversized)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: `SqlSessionRegistry.create: the name is ${oversized.length} characters long; the limit is 1024; nothing was stored`,
    });
    expect(await registry.get("s")).toBeNull();
  });
});
