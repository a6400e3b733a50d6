import { describe, expect, it } from "vitest";
import { type BlockWrite, ContextBlocks, type ContextEvent } from "../src/index.js";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "../src/memory/index.js";
import { sha256Hex } from "../src/store-kit.js";

function context(store = new InMemoryStore()): ContextBlocks {
  return new ContextBlocks(
    [
      { label: "memory", maxTokens: 100, provider: new InMemoryContextProvider({ store }) },
      { label: "notes", provider: new InMemorySearchProvider({ store }) },
      { label: "soul", provider: { get: async () => "You are terse." } },
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
  );
}

describe("ContextBlocks.subscribe", () => {
  it("hears each successful write, from methods and from tools, and the prompt refresh", async () => {
    const blocks = context();
    const events: ContextEvent[] = [];
    blocks.subscribe((event) => events.push(event));
    await blocks.setBlock("memory", "a");
    await blocks.appendToBlock("memory", "b");
    await blocks.setEntry("notes", "k1", "an entry");
    await blocks.deleteEntry("notes", "k1");
    const setContext = blocks.toolSpecs().find((spec) => spec.name === "set_context");
    const outcome = await setContext?.execute({ label: "memory", content: "from the model" });
    expect(outcome?.isError).toBe(false);
    const prompt = await blocks.refreshSystemPrompt();
    expect(events).toEqual([
      { type: "block-written", label: "memory", action: "set", source: { kind: "api", name: "setBlock" } },
      {
        type: "block-written",
        label: "memory",
        action: "append",
        source: { kind: "api", name: "appendToBlock" },
      },
      {
        type: "block-written",
        label: "notes",
        action: "set-entry",
        key: "k1",
        source: { kind: "api", name: "setEntry" },
      },
      {
        type: "block-written",
        label: "notes",
        action: "delete-entry",
        key: "k1",
        source: { kind: "api", name: "deleteEntry" },
      },
      {
        type: "block-written",
        label: "memory",
        action: "set",
        source: { kind: "tool", name: "set_context" },
      },
      { type: "prompt-refreshed", prompt, hash: await sha256Hex(prompt) },
    ]);
    expect(prompt).toContain("from the model");
  });

  it("is silent for refused writes, and a throwing or rejecting listener never fails the write", async () => {
    const blocks = context();
    const heard: ContextEvent[] = [];
    blocks.subscribe(() => {
      throw new Error("listener fails");
    });
    blocks.subscribe(async () => {
      throw new Error("listener rejects");
    });
    blocks.subscribe((event) => heard.push(event));
    await expect(blocks.setBlock("soul", "x")).rejects.toThrow(/readonly|read-only/i);
    await expect(blocks.setBlock("memory", "word ".repeat(1_000))).rejects.toThrow();
    expect(heard).toEqual([]);
    await expect(blocks.setBlock("memory", "fine")).resolves.toMatchObject({ content: "fine" });
    expect(heard).toHaveLength(1);
  });

  it("unsubscribes with the returned function; the same listener twice is called twice", async () => {
    const blocks = context();
    let calls = 0;
    const listener = () => {
      calls++;
    };
    const first = blocks.subscribe(listener);
    blocks.subscribe(listener);
    await blocks.setBlock("memory", "a");
    expect(calls).toBe(2);
    first();
    await blocks.setBlock("memory", "b");
    expect(calls).toBe(3);
    expect(() => blocks.subscribe(42 as never)).toThrow(/subscribe: expected a function/);
  });

  it("hears the prompt frozen (rendered, then adopted on a cold start) with its SHA-256", async () => {
    const store = new InMemoryStore();
    const first = context(store);
    const heard: ContextEvent[] = [];
    first.subscribe((event) => heard.push(event));
    const prompt = await first.freezeSystemPrompt();
    await first.freezeSystemPrompt(); // warm: no second event
    const hash = await sha256Hex(prompt);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(heard).toEqual([{ type: "prompt-frozen", prompt, hash, origin: "rendered" }]);
    const cold = context(store);
    const coldHeard: ContextEvent[] = [];
    cold.subscribe((event) => coldHeard.push(event));
    await cold.freezeSystemPrompt();
    expect(coldHeard).toEqual([{ type: "prompt-frozen", prompt, hash, origin: "stored" }]);
  });

  it("hears a reminder sent only when the caller says it sends it, with the blocks it carries", async () => {
    const store = new InMemoryStore();
    const blocks = new ContextBlocks(
      [
        { label: "memory", provider: new InMemoryContextProvider({ store }) },
        { label: "date", whenChanged: "remind", provider: new InMemoryContextProvider({ store }) },
      ],
      new InMemoryContextProvider({ store, label: "_system_prompt" }),
    );
    await blocks.setBlock("date", "Monday");
    await blocks.freezeSystemPrompt();
    await blocks.setBlock("date", "Tuesday");
    const heard: ContextEvent[] = [];
    blocks.subscribe((event) => heard.push(event));
    const looked = await blocks.reminder();
    expect(looked).toContain("Tuesday");
    expect(heard).toEqual([]);
    const sent = await blocks.reminder({ sending: true });
    expect(heard).toEqual([{ type: "reminder-sent", reminder: sent, labels: ["date"] }]);
  });
});

describe("a provider that changes the write it is given", () => {
  /** The reference provider, but its `setIf` rewrites the source it is handed and loses the first race. */
  class RewritingProvider extends InMemoryContextProvider {
    readonly seen: unknown[] = [];
    override async setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
      this.seen.push(structuredClone(write));
      if (write?.source) {
        write.source.name = "rewritten";
        write.source.toolCallId = "not-the-call";
      }
      // Another agent writes the block between the read and this write: core tries again.
      if (this.seen.length === 1) await super.set("changed by another agent");
      return super.setIf(expected, content, write);
    }
  }

  it("gets a fresh copy on each attempt, and the event names the write's own source", async () => {
    const provider = new RewritingProvider();
    const blocks = new ContextBlocks([{ label: "memory", provider }]);
    const events: ContextEvent[] = [];
    blocks.subscribe((event) => events.push(event));
    const source = { kind: "tool", name: "set_context", toolCallId: "call-1" } as const;
    await blocks.appendToBlock("memory", "a fact", { source });
    expect(provider.seen).toEqual([{ source }, { source }]);
    expect(events).toEqual([{ type: "block-written", label: "memory", action: "append", source }]);
    expect(await provider.get()).toBe("changed by another agent\na fact");
  });
});

describe("a keyed provider that changes the write it is given", () => {
  class RewritingSkills extends InMemorySkillProvider {
    override async set(key: string, content: string, description?: string, write?: BlockWrite) {
      if (write?.source) write.source.name = "rewritten";
      return super.set(key, content, description, write);
    }
  }

  it("cannot change the source the event names", async () => {
    const blocks = new ContextBlocks([{ label: "skills", provider: new RewritingSkills() }]);
    const events: ContextEvent[] = [];
    blocks.subscribe((event) => events.push(event));
    await blocks.setEntry("skills", "greeting", "Say hello.");
    await blocks.editEntry("skills", "greeting", "hello", "good day");
    const source = (name: string) => ({ kind: "api", name });
    expect(events).toEqual([
      {
        type: "block-written",
        label: "skills",
        action: "set-entry",
        key: "greeting",
        source: source("setEntry"),
      },
      {
        type: "block-written",
        label: "skills",
        action: "set-entry",
        key: "greeting",
        source: source("editEntry"),
      },
    ]);
  });
});
