import { isContextError } from "@contextblocks/core";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";

describe("an entry over 2 MB (what a Durable Object's SQLite refuses)", () => {
  it("is refused with an error naming its size, and the index is unchanged", async () => {
    const provider = new Fts5SearchProvider(new Database(":memory:"), { label: "docs" });
    await provider.set("intro", "Tides rise twice a day.");
    const error = await provider
      .set("manual", "word ".repeat(maxRowBytes / 5), { context: "Manual, chapter 1" })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(isContextError(error) && error.code === "INVALID_INPUT").toBe(true);
    expect((error as Error).message).toMatch(
      /entry "manual" \(key, content and context\) is 2,000,023 bytes .* at most 2,000,000/,
    );
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(await provider.search("word")).toBeNull();
  });
});
