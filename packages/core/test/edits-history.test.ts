import { describe, expect, it } from "vitest";
import { ContextBlocks, type ContextToolSpec, isContextError } from "../src/index.js";
import { InMemoryContextProvider, InMemoryStore } from "../src/memory/index.js";

function context(store = new InMemoryStore(), retention?: number) {
  return new ContextBlocks([
    { label: "soul", provider: { get: async () => "Be kind." } },
    {
      label: "profile",
      description: "The user",
      maxTokens: 40,
      provider: new InMemoryContextProvider({
        store,
        ...(retention === undefined ? {} : { versionRetention: retention }),
      }),
    },
  ]);
}

function editTool(blocks: ContextBlocks): ContextToolSpec {
  const spec = blocks.toolSpecs().find((candidate) => candidate.name === "edit_context");
  if (!spec) throw new Error("no edit_context");
  return spec;
}

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (isContextError(error)) return error.code;
    throw error;
  }
  return "none";
}

describe("editBlock", () => {
  it("replaces the one occurrence, deletes with an empty new_str, and refuses 0 or several matches", async () => {
    const blocks = context();
    await blocks.setBlock("profile", "Name: Ada\nCity: Paris\nDrinks: tea");
    expect((await blocks.editBlock("profile", "City: Paris", "City: Lyon")).content).toBe(
      "Name: Ada\nCity: Lyon\nDrinks: tea",
    );
    expect((await blocks.editBlock("profile", "\nDrinks: tea", "")).content).toBe("Name: Ada\nCity: Lyon");
    expect(await codeOf(blocks.editBlock("profile", "Berlin", "x"))).toBe("NO_MATCH");
    await blocks.setBlock("profile", "a-b a-b a-b");
    await expect(blocks.editBlock("profile", "a-b", "c")).rejects.toThrow(/occurs 3 times/);
    expect(await codeOf(blocks.editBlock("profile", "a-b", "c"))).toBe("MULTIPLE_MATCHES");
    expect(await codeOf(blocks.editBlock("soul", "kind", "cruel"))).toBe("READONLY");
    expect(await codeOf(blocks.editBlock("nope", "a", "b"))).toBe("NOT_FOUND");
    expect(await codeOf(blocks.editBlock("profile", "a-b a-b a-b", "word ".repeat(200)))).toBe("MAX_TOKENS");
    expect((await blocks.blockVersions("profile")).map((version) => version.content)[0]).toBe("a-b a-b a-b");
  });

  it("edit_context answers success, not found, ambiguous with the count, readonly and over the limit", async () => {
    const blocks = context();
    await blocks.setBlock("profile", "likes tea; likes tea");
    const tool = editTool(blocks);
    const answer = (input: unknown) => tool.execute(input, { toolCallId: "call-7" });
    expect(await answer({ label: "profile", old_str: "likes tea", new_str: "x" })).toEqual({
      isError: true,
      text: "Error: old_str occurs 2 times in profile; nothing was changed. Include more of the surrounding text so it matches exactly once.",
    });
    expect(
      await answer({ label: "profile", old_str: "tea; likes tea", new_str: "tea; likes coffee" }),
    ).toEqual({
      isError: false,
      text: expect.stringMatching(/^Edited profile\. Usage: \d+% \(\d+\/40 tokens\)$/),
    });
    expect((await answer({ label: "profile", old_str: "cocoa", new_str: "x" })).text).toMatch(
      /^Error: old_str does not occur in profile/,
    );
    expect((await answer({ label: "soul", old_str: "kind", new_str: "x" })).text).toMatch(
      /^Error: Block "soul" is not a plain writable block/,
    );
    expect((await answer({ label: "profile", old_str: "coffee", new_str: "tea ".repeat(300) })).text).toMatch(
      /^Error: Block "profile" exceeds maxTokens/,
    );
    const [newest] = await blocks.blockVersions("profile", { limit: 1 });
    expect(newest?.content).toBe("likes tea; likes coffee");
    expect(newest?.source).toEqual({ kind: "tool", name: "edit_context", toolCallId: "call-7" });
  });

  it("the tool description is a pure function of the configuration: writes never change it", async () => {
    const blocks = context();
    const before = JSON.stringify(editTool(blocks));
    await blocks.setBlock("profile", "something else entirely");
    expect(JSON.stringify(editTool(blocks))).toBe(before);
    expect(JSON.stringify(editTool(context()))).toBe(before);
  });
});

describe("block history and restore", () => {
  it("lists versions newest first with source, restores as a new version, and survives a restart", async () => {
    const store = new InMemoryStore();
    const first = context(store);
    await first.setBlock("profile", "v1");
    await first.appendToBlock("profile", "v2");
    await first.editBlock("profile", "v2", "v3");
    await first.setBlock("profile", "v1\nv3"); // unchanged content: no version
    const restarted = context(store);
    const history = await restarted.blockVersions("profile");
    expect(history.map((version) => [version.version, version.content, version.source.name])).toEqual([
      [3, "v1\nv3", "editBlock"],
      [2, "v1\nv2", "appendToBlock"],
      [1, "v1", "setBlock"],
    ]);
    expect(Number.isNaN(Date.parse(history[0]?.writtenAt ?? ""))).toBe(false);
    expect((await restarted.restoreBlock("profile", 1)).content).toBe("v1");
    // The block as the context reports it follows the restore (the cache keeps the write).
    expect(restarted.getBlock("profile")?.content).toBe("v1");
    const [restored] = await restarted.blockVersions("profile", { limit: 1 });
    expect(restored).toMatchObject({
      version: 4,
      content: "v1",
      source: { kind: "api", name: "restoreBlock", restoredFrom: 1 },
    });
    expect(await codeOf(restarted.restoreBlock("profile", 99))).toBe("NOT_FOUND");
    expect(await codeOf(restarted.blockVersions("soul"))).toBe("READONLY");
    expect(await codeOf(restarted.blockVersions("profile", { limit: 0 }))).toBe("INVALID_INPUT");
  });

  it("keeps only the newest versions within the retention", async () => {
    const blocks = context(new InMemoryStore(), 3);
    for (let index = 1; index <= 6; index++) await blocks.setBlock("profile", `v${index}`);
    expect((await blocks.blockVersions("profile")).map((version) => version.version)).toEqual([6, 5, 4]);
    expect(await codeOf(blocks.restoreBlock("profile", 2))).toBe("NOT_FOUND");
  });

  it("a provider without history() is UNSUPPORTED", async () => {
    let value = "";
    const blocks = new ContextBlocks([
      {
        label: "plain",
        provider: {
          get: async () => value,
          set: async (next: string) => {
            value = next;
          },
        },
      },
    ]);
    expect(await codeOf(blocks.blockVersions("plain"))).toBe("UNSUPPORTED");
  });
});

describe("a block shared by two contexts", () => {
  it("concurrent edits from two agents both land; an edit whose old_str is gone fails", async () => {
    const store = new InMemoryStore();
    const alice = context(store);
    const bob = context(store);
    await alice.setBlock("profile", "Name: Ada\nCity: Paris");
    await bob.load(); // bob's cache holds the old text
    await alice.editBlock("profile", "Name: Ada", "Name: Ada Lovelace");
    await bob.editBlock("profile", "City: Paris", "City: Lyon");
    expect(await new InMemoryContextProvider({ store, label: "profile" }).get()).toBe(
      "Name: Ada Lovelace\nCity: Lyon",
    );
    await Promise.all([
      alice.appendToBlock("profile", "Drinks: tea"),
      bob.appendToBlock("profile", "Plays: chess"),
    ]);
    const text = (await new InMemoryContextProvider({ store, label: "profile" }).get()) ?? "";
    expect(text).toContain("Drinks: tea");
    expect(text).toContain("Plays: chess");
    expect(await codeOf(bob.editBlock("profile", "City: Paris", "City: Rome"))).toBe("NO_MATCH");
  });
});
