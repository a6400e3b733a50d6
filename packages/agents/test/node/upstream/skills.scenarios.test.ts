// Scenarios of cloudflare/agents' skills tests (packages/agents/src/tests/experimental/memory/session/
// skills.test.ts), written for contextblocks and run through the compatibility entry. Their R2 scenarios
// (keys filter listing and loads, set outside keys) run on real R2 in packages/r2/test/workerd.
import { ContextBlocks, Session } from "@contextblocks/agents/experimental/memory/session";
import { describe, expect, it } from "vitest";
import { call, describeTool, fixed, skillMap, variable } from "./providers.js";

async function loaded(configs: ConstructorParameters<typeof ContextBlocks>[0]) {
  const blocks = new ContextBlocks(configs);
  await blocks.load();
  return { blocks, tools: await blocks.tools() };
}

describe("which tools a provider brings", () => {
  it("a read-only block brings no set_context", async () => {
    expect((await loaded([{ label: "soul", provider: fixed("identity") }])).tools).not.toHaveProperty(
      "set_context",
    );
  });
  it("a writable block brings set_context", async () => {
    expect((await loaded([{ label: "memory", provider: variable("") }])).tools).toHaveProperty("set_context");
  });
  it("a skill block brings set_context, load_context and unload_context", async () => {
    const { tools } = await loaded([
      { label: "skills", provider: skillMap({ hello: { content: "Say hi" } }) },
    ]);
    expect(Object.keys(tools).sort()).toEqual(["load_context", "set_context", "unload_context"]);
  });
  it("the prompt marks a read-only block [readonly] and a writable one not", async () => {
    expect(
      (await loaded([{ label: "soul", provider: fixed("identity") }])).blocks.toSystemPrompt(),
    ).toContain("[readonly]");
    expect(
      (await loaded([{ label: "memory", provider: variable("facts") }])).blocks.toSystemPrompt(),
    ).not.toContain("[readonly]");
  });
});

describe("skill blocks in the prompt", () => {
  it("list each skill's key and description under a [loadable] header", async () => {
    const { blocks } = await loaded([
      {
        label: "skills",
        provider: skillMap({
          "tide-tables": { content: "Read the tables", description: "Tides" },
          knots: { content: "Bowline first", description: "Knots guide" },
        }),
      },
    ]);
    const prompt = blocks.toSystemPrompt();
    for (const word of ["SKILLS", "[loadable]", "tide-tables", "Tides", "knots", "Knots guide"])
      expect(prompt).toContain(word);
  });
  it("an empty skill block still renders, so load_context stays discoverable", async () => {
    const prompt = (await loaded([{ label: "skills", provider: skillMap() }])).blocks.toSystemPrompt();
    expect(prompt).toContain("SKILLS");
    expect(prompt).toContain("[loadable]");
  });
});

describe("load_context", () => {
  it("answers a skill's full text", async () => {
    const { tools } = await loaded([
      { label: "skills", provider: skillMap({ knots: { content: "# Knots\nBowline." } }) },
    ]);
    expect(await call(tools, "load_context", { label: "skills", key: "knots" })).toBe("# Knots\nBowline.");
  });
  it("says Not found for an unknown key", async () => {
    const { tools } = await loaded([{ label: "skills", provider: skillMap({ knots: { content: "x" } }) }]);
    expect(await call(tools, "load_context", { label: "skills", key: "sails" })).toContain("Not found");
  });
  it("is absent without a skill block", async () => {
    expect((await loaded([{ label: "memory", provider: variable("") }])).tools).not.toHaveProperty(
      "load_context",
    );
  });
});

describe("set_context", () => {
  it("writes a plain block", async () => {
    const memory = variable("");
    const { tools } = await loaded([{ label: "memory", maxTokens: 1100, provider: memory }]);
    expect(await call(tools, "set_context", { label: "memory", content: "likes tea" })).toContain(
      "Written to memory",
    );
    expect(memory.value).toBe("likes tea");
  });
  it("stores a skill under its title's slug", async () => {
    const skills = skillMap();
    const { tools } = await loaded([{ label: "skills", provider: skills }]);
    const answer = await call(tools, "set_context", {
      label: "skills",
      content: "Arr",
      metadata: { title: "Pirate voice" },
    });
    expect(answer).toContain("Indexed");
    expect(await skills.load("pirate-voice")).toBe("Arr");
  });
  it("makes a key from the content without a title: slug plus a hash", async () => {
    const skills = skillMap();
    const { tools } = await loaded([{ label: "skills", provider: skills }]);
    const answer = await call(tools, "set_context", { label: "skills", content: "Only a body here" });
    const key = /Indexed "([^"]+)"/.exec(answer)?.[1] ?? "";
    expect(key).toMatch(/^only-a-body-here-[a-z0-9]+$/);
    expect(await skills.load(key)).toBe("Only a body here");
  });
  it("keeps keys apart for texts sharing a prefix, and for non-Latin text", async () => {
    const skills = skillMap();
    const { tools } = await loaded([{ label: "skills", provider: skills }]);
    const keyOf = async (content: string) =>
      /Indexed "([^"]+)"/.exec(await call(tools, "set_context", { label: "skills", content }))?.[1] ?? "";
    const a = await keyOf("Harbour entry at night needs the pilot on board and the lights on");
    const b = await keyOf("Harbour entry at night needs the pilot on board and radio contact");
    const c = await keyOf("港口夜间进港");
    expect(a).not.toBe(b);
    expect(c).toMatch(/^entry-[a-z0-9]+$/);
    expect(await skills.load(c)).toBe("港口夜间进港");
  });
  it("is absent when every block is read-only", async () => {
    expect((await loaded([{ label: "soul", provider: fixed("x") }])).tools).not.toHaveProperty("set_context");
  });
  it("refreshes the skill listing the instance holds after a write with a title", async () => {
    const { blocks, tools } = await loaded([{ label: "skills", provider: skillMap() }]);
    expect(blocks.getBlock("skills")?.content).toBe("");
    await call(tools, "set_context", {
      label: "skills",
      content: "Wave",
      metadata: { title: "Greeting steps", description: "How to greet" },
    });
    expect(blocks.getBlock("skills")?.content).toContain("greeting-steps");
  });
  it("accumulates skills over several writes", async () => {
    const skills = skillMap();
    const { blocks, tools } = await loaded([{ label: "skills", provider: skills }]);
    await call(tools, "set_context", { label: "skills", content: "A", metadata: { title: "First one" } });
    await call(tools, "set_context", { label: "skills", content: "B", metadata: { title: "Second one" } });
    expect(blocks.getBlock("skills")?.content).toContain("first-one");
    expect(blocks.getBlock("skills")?.content).toContain("second-one");
    expect(await skills.load("second-one")).toBe("B");
  });
  it("labels a skill block 'skill collection, keyed entries' in its description", async () => {
    const { tools } = await loaded([{ label: "skills", description: "How-tos", provider: skillMap() }]);
    expect(describeTool(tools, "set_context")).toContain(
      '"skills" (skill collection, keyed entries): How-tos',
    );
  });
});

describe("unload_context", () => {
  const skills = () => skillMap({ pirate: { content: "Arr" }, formal: { content: "Indeed" } });
  it("tracks a load, unloads it, and can load it again", async () => {
    const { blocks, tools } = await loaded([{ label: "skills", provider: skills() }]);
    await call(tools, "load_context", { label: "skills", key: "pirate" });
    expect(blocks.getLoadedSkillKeys()).toEqual(new Set(["skills:pirate"]));
    expect(await call(tools, "unload_context", { label: "skills", key: "pirate" })).toContain("Unloaded");
    expect(blocks.getLoadedSkillKeys().size).toBe(0);
    expect(await call(tools, "load_context", { label: "skills", key: "pirate" })).toBe("Arr");
    expect(blocks.getLoadedSkillKeys().has("skills:pirate")).toBe(true);
  });
  it("says 'not currently loaded' for a skill not loaded", async () => {
    const { tools } = await loaded([{ label: "skills", provider: skills() }]);
    expect(await call(tools, "unload_context", { label: "skills", key: "pirate" })).toContain(
      "not currently loaded",
    );
  });
  it("tells the unload callback", async () => {
    const { blocks, tools } = await loaded([{ label: "skills", provider: skills() }]);
    const heard: string[] = [];
    blocks.setUnloadCallback((label, key) => heard.push(`${label}:${key}`));
    await call(tools, "load_context", { label: "skills", key: "formal" });
    await call(tools, "unload_context", { label: "skills", key: "formal" });
    expect(heard).toEqual(["skills:formal"]);
  });
  it("clearSkillState forgets every load", async () => {
    const { blocks, tools } = await loaded([{ label: "skills", provider: skills() }]);
    await call(tools, "load_context", { label: "skills", key: "pirate" });
    await call(tools, "load_context", { label: "skills", key: "formal" });
    blocks.clearSkillState();
    expect(blocks.getLoadedSkillKeys().size).toBe(0);
  });
  it("is absent without a skill block", async () => {
    expect((await loaded([{ label: "memory", provider: variable("") }])).tools).not.toHaveProperty(
      "unload_context",
    );
  });
  it("DIVERGENCE: its description does not list the loaded skills (it would change every turn and bust the prefix cache)", async () => {
    const { blocks } = await loaded([{ label: "skills", provider: skills() }]);
    const before = describeTool(await blocks.tools(), "unload_context");
    await blocks.loadSkill("skills", "pirate");
    const after = describeTool(await blocks.tools(), "unload_context");
    expect(after).toBe(before);
    expect(after).not.toContain("skills:pirate");
  });
});

describe("skills a session restores", () => {
  const loadTurn = {
    id: "a1",
    role: "assistant" as const,
    parts: [
      {
        type: "tool-load_context",
        toolCallId: "t1",
        state: "output-available",
        input: { label: "skills", key: "pirate" },
        output: "Arr",
      },
    ],
  };
  it("a skill block added later with addContext restores what the transcript loaded", async () => {
    const backend = (await import("@contextblocks/sessions/memory")).inMemoryBackend();
    const session = Session.create(backend).forSession("s");
    await session.appendMessage({
      id: "u1",
      role: "user",
      parts: [{ type: "text", text: "talk like a pirate" }],
    });
    await session.appendMessage(loadTurn as never);
    await session.addContext("skills", { provider: skillMap({ pirate: { content: "Arr" } }) });
    expect(await call(await session.tools(), "unload_context", { label: "skills", key: "pirate" })).toContain(
      "Unloaded",
    );
  });
  it("the first tools() restores skills loaded before a restart", async () => {
    const backend = (await import("@contextblocks/sessions/memory")).inMemoryBackend();
    const first = Session.create(backend).forSession("s");
    await first.appendMessage(loadTurn as never);
    const later = Session.create(backend)
      .forSession("s")
      .withContext("skills", { provider: skillMap({ pirate: { content: "Arr" } }) });
    expect(await call(await later.tools(), "unload_context", { label: "skills", key: "pirate" })).toContain(
      "Unloaded",
    );
  });
});
