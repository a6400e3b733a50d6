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

// A session id comes from the caller (often a URL path) and has no length cap: an error quotes it clipped,
// so a refusal never echoes megabytes back into a log or a response.
describe("SessionManager errors quote ids clipped", () => {
  const long = `s${"x".repeat(100_000)}`;
  const refusal = (attempt: Promise<unknown>) =>
    attempt.then(
      () => new Error("not refused"),
      (caught: unknown) => caught as Error,
    );

  it("fork and compactAndSplit of a session that is not there", async () => {
    const manager = new SessionManager(inMemoryBackend());
    for (const attempt of [
      () => manager.fork(long, `m${"y".repeat(1_000)}`, "copy"),
      () => manager.compactAndSplit(long, "sum"),
    ]) {
      const error = await refusal(attempt());
      expect(error).toMatchObject({ code: "NOT_FOUND" });
      expect(error.message).toMatch(/session "sx+…"/);
      expect(error.message.length).toBeLessThan(300);
    }
  });

  it("a registry's refusal of an id it holds", async () => {
    const registry = inMemoryBackend().registry;
    await registry.create(long, "one");
    const error = await refusal(registry.create(long, "again"));
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
    expect(error.message.length).toBeLessThan(300);
  });

  it("addUsage refuses a negative amount and keeps the totals", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const info = await manager.create("chat");
    await manager.addUsage(info.id, 100, 20, 0.5);
    await expect(manager.addUsage(info.id, -100, 0, 0)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: "addUsage: inputTokens must be a finite number ≥ 0, got number -100",
    });
    await expect(manager.addUsage(info.id, 0, 0, -0.5)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await manager.get(info.id)).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      estimated_cost: 0.5,
    });
  });
});
