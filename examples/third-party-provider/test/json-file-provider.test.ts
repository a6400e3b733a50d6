import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JsonFileContextProvider } from "../src/index.js";

// What the conformance suite cannot know about this provider: its file format and its errors.

let directory: string;
let path: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "contextblocks-json-"));
  path = join(directory, "context.json");
});

afterEach(() => rm(directory, { recursive: true, force: true }));

describe("JsonFileContextProvider's file", () => {
  it("is a version-1 document with one key per label, and no temporary file is left", async () => {
    const notes = new JsonFileContextProvider({ path, label: "notes" });
    const soul = new JsonFileContextProvider({ path, label: "soul" });
    await Promise.all([notes.set("Prefers metric units."), soul.set("You are helpful.")]);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({
      version: 1,
      blocks: { notes: "Prefers metric units.", soul: "You are helpful." },
    });
    expect(await readdir(directory)).toEqual(["context.json"]);
  });

  it("is an error when it is not valid JSON, and is left as it was", async () => {
    await writeFile(path, "{ not json");
    const provider = new JsonFileContextProvider({ path, label: "notes" });
    await expect(provider.get()).rejects.toThrow(/is not valid JSON/);
    await expect(provider.set("text")).rejects.toThrow(/is not valid JSON/);
    expect(await readFile(path, "utf8")).toBe("{ not json");
  });

  it("is an error when it is JSON of another shape", async () => {
    await writeFile(path, JSON.stringify({ version: 2, blocks: {} }));
    await expect(new JsonFileContextProvider({ path, label: "notes" }).get()).rejects.toThrow(
      /not a context store file/,
    );
  });
});

describe("JsonFileContextProvider's label", () => {
  it("is required before first use", async () => {
    await expect(new JsonFileContextProvider({ path }).get()).rejects.toThrow(/no label/);
  });

  it("given to the constructor wins over init(label)", async () => {
    const provider = new JsonFileContextProvider({ path, label: "explicit" });
    provider.init("from-config");
    await provider.set("text");
    expect(await new JsonFileContextProvider({ path, label: "explicit" }).get()).toBe("text");
  });
});
