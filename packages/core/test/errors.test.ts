import { describe, expect, it } from "vitest";
import { ContextError, isContextError } from "../src/index.js";

describe("isContextError", () => {
  it("recognises a ContextError by its registered brand, also one from another copy of the package", () => {
    expect(isContextError(new ContextError("NOT_FOUND", "x"))).toBe(true);
    // Another install defines its own class; only the registered symbol is shared.
    class OtherCopyError extends Error {
      readonly code = "NOT_FOUND";
      constructor(message: string) {
        super(message);
        Object.defineProperty(this, Symbol.for("contextblocks.error"), { value: true });
      }
    }
    const foreign = new OtherCopyError("from another copy");
    expect(foreign instanceof ContextError).toBe(false);
    expect(isContextError(foreign)).toBe(true);
  });

  it("refuses look-alikes without the brand", () => {
    const lookAlike = Object.assign(new Error("x"), { name: "ContextError", code: "NOT_FOUND" });
    expect(isContextError(lookAlike)).toBe(false);
    expect(isContextError({ [Symbol("contextblocks.error")]: true })).toBe(false);
    expect(isContextError(null)).toBe(false);
    expect(isContextError("ContextError")).toBe(false);
  });
});
