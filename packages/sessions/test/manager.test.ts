import { describe, expect, it } from "vitest";
import { SessionBuilder, SessionManager } from "../src/index.js";
import { inMemoryBackend } from "../src/memory/index.js";

// What a manager does with sessions runs on every backend in tests/backends; here: what it refuses.
describe("new SessionManager", () => {
  it("refuses what is not a backend or a builder, naming it", () => {
    expect(() => new SessionManager({} as never)).toThrow(/expected a SessionBackend/);
    expect(() => new SessionManager(42 as never)).toThrow(/expected a SessionBackend/);
    expect(new SessionManager(new SessionBuilder(inMemoryBackend())).getSession("a").id).toBe("a");
  });
});

// The SQLite backend refused these by name while the memory backend found nothing: the check is the
// manager's now, the same on every backend.
describe("SessionManager.search", () => {
  it.each([0, -1, Number.NaN, 1_001, Number.POSITIVE_INFINITY])(
    "refuses a limit of %s by name",
    async (limit) => {
      const manager = new SessionManager(inMemoryBackend());
      await manager
        .getSession("a")
        .appendMessage({ id: "a1", role: "user", parts: [{ type: "text", text: "deploy on Friday" }] });
      await expect(manager.search("deploy", { limit })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: `search: limit must be a whole number from 1 to 1000, got ${limit}`,
      });
      expect((await manager.search("deploy", { limit: 1 })).map((hit) => hit.id)).toEqual(["a1"]);
    },
  );
});
