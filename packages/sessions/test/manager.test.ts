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
