import { isContextError } from "@contextblocks/core";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";

describe("Fts5SearchProvider options: the namespace rule shared with SqliteContextProvider", () => {
  it("takes no namespace or a non-empty one, and refuses an empty or ill-formed one", () => {
    const database = new Database(":memory:");
    expect(new Fts5SearchProvider(database).namespace).toBeUndefined();
    expect(new Fts5SearchProvider(database, { namespace: "tenant-a" }).namespace).toBe("tenant-a");
    for (const namespace of ["", "t\ud800"]) {
      let error: unknown;
      try {
        new Fts5SearchProvider(database, { namespace });
      } catch (caught) {
        error = caught;
      }
      expect(isContextError(error) && error.code).toBe("INVALID_CONFIG");
    }
  });

  it("reports its statements through onStatement", async () => {
    const texts: string[] = [];
    const provider = new Fts5SearchProvider(new Database(":memory:"), {
      label: "notes",
      onStatement: (report) => texts.push(report.text),
    });
    await provider.set("tea", "Green tea at four.");
    expect(texts.some((text) => text.includes("INSERT"))).toBe(true);
  });
});
