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
    for (const name of ["one", "two", "three"]) manager.create(name);
    expect(manager.list().map((info) => info.name)).toEqual(["three", "two", "one"]);
    expect(manager.list({ limit: 2 }).map((info) => info.name)).toEqual(["three", "two"]);
    expect(() => manager.list({ limit: 0 })).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });
});
