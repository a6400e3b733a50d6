import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

describe("SessionManager.list on the agents drop-in", () => {
  it("lists every session without options, as agents does, and the newest `limit` with { limit }", async () => {
    temporary = openTemporaryDatabase();
    const manager = new SessionManager(temporary.database);
    for (const name of ["one", "two", "three"]) await manager.create(name);
    expect((await manager.list()).map((info) => info.name)).toEqual(["three", "two", "one"]);
    expect((await manager.list({ limit: 2 })).map((info) => info.name)).toEqual(["three", "two"]);
    await expect(manager.list({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
