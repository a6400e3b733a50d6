import { describe, expect, it } from "vitest";
import { dayWords, monthNames } from "../src/index.js";

describe("dayWords and monthNames", () => {
  it("writes a day with the exported month names, in UTC", () => {
    expect(monthNames).toHaveLength(12);
    expect(dayWords(new Date(Date.UTC(2023, 4, 8, 23, 30)))).toBe(`8 ${monthNames[4]} 2023`);
    expect(dayWords("2024-12-31T23:59:59Z")).toBe("31 December 2024");
    expect(dayWords("not a date")).toBeNull();
  });
});
