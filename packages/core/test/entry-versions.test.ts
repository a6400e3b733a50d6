import { describe, expect, it } from "vitest";
import { ContextBlocks, isContextError } from "../src/index.js";
import { InMemorySearchProvider, InMemorySkillProvider } from "../src/memory/index.js";

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (isContextError(error)) return error.code;
    throw error;
  }
  return "none";
}

/** A skill provider without versions: only what `SkillProvider` requires, and set/delete. */
function plainSkills() {
  const entries = new Map<string, string>();
  return {
    get: async () => [...entries.keys()].map((key) => `- ${key}`).join("\n") || null,
    load: async (key: string) => entries.get(key) ?? null,
    set: async (key: string, content: string) => {
      entries.set(key, content);
    },
    delete: async (key: string) => {
      entries.delete(key);
    },
  };
}

function context() {
  return new ContextBlocks([
    { label: "skills", maxTokens: 20, provider: new InMemorySkillProvider({ versionRetention: 2 }) },
    { label: "plain", provider: plainSkills() },
    { label: "search", provider: new InMemorySearchProvider() },
  ]);
}

describe("entry versions through ContextBlocks", () => {
  it("records the tool's source for set_context and edit_context writes of an entry", async () => {
    const blocks = context();
    await blocks.load();
    const setContext = blocks.toolSpecs().find((spec) => spec.name === "set_context");
    await setContext?.execute(
      { label: "skills", content: "Run the tests.", metadata: { title: "deploy" } },
      { toolCallId: "call-1" },
    );
    await blocks.editEntry("skills", "deploy", "Run", "Skip", {
      source: { kind: "tool", name: "edit_context", toolCallId: "call-2" },
    });
    const versions = await blocks.entryVersions("skills", "deploy");
    expect(versions.map((version) => [version.version, version.content, version.source])).toEqual([
      [2, "Skip the tests.", { kind: "tool", name: "edit_context", toolCallId: "call-2" }],
      [1, "Run the tests.", { kind: "tool", name: "set_context", toolCallId: "call-1" }],
    ]);
  });

  it("refuses what it cannot do with a code, and writes nothing", async () => {
    const blocks = context();
    await blocks.load();
    await blocks.setEntry("skills", "deploy", "Run the tests.");
    expect(await codeOf(blocks.entryVersions("plain", "deploy"))).toBe("UNSUPPORTED");
    expect(await codeOf(blocks.entryVersions("search", "deploy"))).toBe("UNSUPPORTED");
    expect(await codeOf(blocks.entryVersions("nope", "deploy"))).toBe("NOT_FOUND");
    expect(await codeOf(blocks.entryVersions("skills", "deploy", { limit: 0 }))).toBe("INVALID_INPUT");
    expect(await codeOf(blocks.restoreEntry("skills", "deploy", 1.5))).toBe("INVALID_INPUT");
    expect(await codeOf(blocks.restoreEntry("skills", "deploy", 7))).toBe("NOT_FOUND");
    expect(await codeOf(blocks.restoreEntry("skills", "other", 1))).toBe("NOT_FOUND");
    expect(await blocks.loadEntry("skills", "deploy")).toBe("Run the tests.");
    expect((await blocks.entryVersions("skills", "deploy")).length).toBe(1);
  });

  it("points a whole-block history call on a keyed block at the per-entry calls", async () => {
    const blocks = context();
    await blocks.load();
    for (const call of [blocks.blockVersions("skills"), blocks.restoreBlock("search", 1)]) {
      await expect(call).rejects.toMatchObject({
        code: "KEYED_BLOCK",
        message: expect.stringMatching(/versions are kept per entry: entryVersions\(label, key\)/),
      });
    }
  });

  it("holds maxTokens on a restore", async () => {
    const blocks = context();
    await blocks.load();
    await blocks.setEntry("skills", "deploy", "one two three four five six seven eight nine ten");
    await blocks.setEntry("skills", "deploy", "short");
    // A later, smaller limit: the old version no longer fits.
    const tight = new ContextBlocks([
      { label: "skills", maxTokens: 4, provider: blocks.getConfigs()[0]?.provider as InMemorySkillProvider },
    ]);
    await tight.load();
    expect(await codeOf(tight.restoreEntry("skills", "deploy", 1))).toBe("MAX_TOKENS");
    expect(await tight.loadEntry("skills", "deploy")).toBe("short");
  });
});
