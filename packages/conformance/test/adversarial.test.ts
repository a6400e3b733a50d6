import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS, INVISIBLE_CHARACTERS } from "../src/index.js";
import { runWithinDeadline } from "../src/node.js";

describe("ADVERSARIAL_TEXTS", () => {
  it("has unique names, every category, and a correct wellFormed flag", () => {
    const names = ADVERSARIAL_TEXTS.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(ADVERSARIAL_TEXTS.map((entry) => entry.category))).toEqual(
      new Set(["backtracking", "structure", "unicode", "surrogate", "huge"]),
    );
    for (const entry of ADVERSARIAL_TEXTS) {
      const native = (entry.text as unknown as { isWellFormed(): boolean }).isWellFormed();
      expect(entry.wellFormed, entry.name).toBe(native);
    }
    expect(ADVERSARIAL_TEXTS.filter((entry) => entry.category === "structure").length).toBeGreaterThan(
      INVISIBLE_CHARACTERS.length,
    );
  });
});

describe("runWithinDeadline", () => {
  const moduleUrl = `data:text/javascript,${encodeURIComponent(
    "export function spin(ms) { const end = Date.now() + ms; while (Date.now() < end); }",
  )}`;

  it("returns when every call finishes", async () => {
    await runWithinDeadline({ moduleUrl, exportName: "spin", calls: [{ name: "short", args: [10] }] });
  });

  it("fails, naming the call, when one does not return within the deadline (a hung regex)", async () => {
    await expect(
      runWithinDeadline({
        moduleUrl,
        exportName: "spin",
        calls: [
          { name: "quick", args: [1] },
          { name: "stuck", args: [60_000] },
        ],
        deadlineMs: 300,
      }),
    ).rejects.toThrow("spin(stuck) did not finish within 300 ms");
  });
});
