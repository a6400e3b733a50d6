import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../../conformance/src/adversarial.js";
import { isWellFormed, loneSurrogateIndex } from "../../src/index.js";

describe("isWellFormed / loneSurrogateIndex", () => {
  it("finds the first lone surrogate, high or low, and accepts pairs", () => {
    expect(loneSurrogateIndex("")).toBe(-1);
    expect(loneSurrogateIndex("plain 🚀 text 𝔘")).toBe(-1);
    expect(loneSurrogateIndex("ab\ud800")).toBe(2);
    expect(loneSurrogateIndex("ab\ud800c")).toBe(2);
    expect(loneSurrogateIndex("\udc00")).toBe(0);
    expect(loneSurrogateIndex("🚀\udfff\ud800")).toBe(2);
    expect(loneSurrogateIndex("\ud83d\ud83d\ude80")).toBe(0);
    expect(isWellFormed("🚀")).toBe(true);
    expect(isWellFormed("\ud83d")).toBe(false);
  });

  it("agrees with String.prototype.isWellFormed on the adversarial corpus", () => {
    for (const entry of ADVERSARIAL_TEXTS) {
      const native = (entry.text as unknown as { isWellFormed(): boolean }).isWellFormed();
      expect(isWellFormed(entry.text), entry.name).toBe(native);
      expect(entry.wellFormed, entry.name).toBe(native);
    }
  });
});
