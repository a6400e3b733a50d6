import { describe, expect, it, vi } from "vitest";
import { ContextBlocks, type ContextError, type WritableContextProvider } from "../src/index.js";
import { type Deferred, deferred, rejection, settle } from "./helpers.js";

/**
 * A writable provider whose `set` calls stay pending until the test settles them, in any order. It keeps
 * what a real store would: the value of the last `set` to complete. `calls` records each `set` as it starts.
 */
class SlowProvider implements WritableContextProvider {
  value: string | null;
  readonly calls: { content: string; gate: Deferred<void> }[] = [];
  readonly completed: string[] = [];
  constructor(initial: string | null = null) {
    this.value = initial;
  }
  readonly get = vi.fn(async () => this.value);
  readonly set = vi.fn(async (content: string) => {
    const gate = deferred();
    this.calls.push({ content, gate });
    await gate.promise;
    this.value = content;
    this.completed.push(content);
  });
}

/** Settles pending `set` calls newest first, until `expected` calls have been settled. */
async function drainNewestFirst(provider: SlowProvider, expected: number): Promise<void> {
  let settled = 0;
  while (settled < expected) {
    await settle();
    const pending = provider.calls.slice(settled).reverse();
    if (pending.length === 0) throw new Error(`only ${settled} of ${expected} set calls arrived`);
    for (const call of pending) call.gate.resolve();
    settled = provider.calls.length;
  }
}

describe("parallel writes to one block", () => {
  it("parallel appends against a slow provider that resolves out of order all land, in call order", async () => {
    const provider = new SlowProvider("start");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const appends = ["one", "two", "three", "four", "five"].map((text) =>
      context.appendToBlock("memory", text),
    );
    await drainNewestFirst(provider, 5);
    const results = await Promise.all(appends);
    const expected = "start\none\ntwo\nthree\nfour\nfive";
    expect(provider.value).toBe(expected);
    expect(context.getBlock("memory")?.content).toBe(expected);
    expect(results.at(-1)?.content).toBe(expected);
    expect(results.map((block) => block.content.split("\n").length)).toEqual([2, 3, 4, 5, 6]);
    expect(provider.completed).toEqual([
      "start\none",
      "start\none\ntwo",
      "start\none\ntwo\nthree",
      "start\none\ntwo\nthree\nfour",
      expected,
    ]);
  });

  it("a provider write never starts before the previous one to the same block finished", async () => {
    const provider = new SlowProvider(null);
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const first = context.appendToBlock("memory", "a");
    const second = context.appendToBlock("memory", "b");
    await settle();
    expect(provider.calls.map((call) => call.content)).toEqual(["a"]);
    provider.calls[0]?.gate.resolve();
    await settle();
    expect(provider.calls.map((call) => call.content)).toEqual(["a", "a\nb"]);
    provider.calls[1]?.gate.resolve();
    await Promise.all([first, second]);
  });

  it("set and append interleave in call order", async () => {
    const provider = new SlowProvider("old");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const writes = [
      context.appendToBlock("memory", "x"),
      context.setBlock("memory", "fresh"),
      context.appendToBlock("memory", "y"),
    ];
    await drainNewestFirst(provider, 3);
    await Promise.all(writes);
    expect(provider.value).toBe("fresh\ny");
    expect(context.getBlock("memory")?.content).toBe("fresh\ny");
  });

  it("a failed write in the middle fails alone: the ones after it still land on the last good content", async () => {
    const provider = new SlowProvider("start");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const first = context.appendToBlock("memory", "one");
    const second = context.appendToBlock("memory", "two");
    const third = context.appendToBlock("memory", "three");
    await settle();
    provider.calls[0]?.gate.resolve();
    await settle();
    provider.calls[1]?.gate.reject(new Error("conflict"));
    await settle();
    provider.calls[2]?.gate.resolve();
    await first;
    const error = (await rejection(second)) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    await third;
    expect(provider.value).toBe("start\none\nthree");
    expect(context.getBlock("memory")?.content).toBe("start\none\nthree");
  });

  it("an append over the limit fails alone and does not stop later writes", async () => {
    const provider = new SlowProvider("");
    const context = new ContextBlocks([{ label: "memory", maxTokens: 8, provider }], null, null, {
      tokenCounter: (text) => text.length,
    });
    const writes = [
      context.appendToBlock("memory", "abc"),
      context.appendToBlock("memory", "toolongtext"),
      context.appendToBlock("memory", "de"),
    ];
    await drainNewestFirst(provider, 2);
    const [first, second, third] = await Promise.allSettled(writes);
    expect(first?.status).toBe("fulfilled");
    expect(second?.status).toBe("rejected");
    expect(((second as PromiseRejectedResult).reason as ContextError).code).toBe("MAX_TOKENS");
    expect(third?.status).toBe("fulfilled");
    expect(provider.value).toBe("abc\nde");
  });
});

describe("writes to different blocks", () => {
  it("do not wait for each other", async () => {
    const slow = new SlowProvider(null);
    const fast = new SlowProvider(null);
    const context = new ContextBlocks([
      { label: "slow", provider: slow },
      { label: "fast", provider: fast },
    ]);
    const slowWrite = context.setBlock("slow", "s");
    const fastWrite = context.setBlock("fast", "f");
    await settle();
    expect(fast.calls).toHaveLength(1);
    fast.calls[0]?.gate.resolve();
    expect((await fastWrite).content).toBe("f");
    expect(slow.completed).toEqual([]);
    slow.calls[0]?.gate.resolve();
    await slowWrite;
    expect(slow.value).toBe("s");
  });
});

describe("runtime changes during writes", () => {
  it("a block removed while its write is in flight does not come back", async () => {
    const provider = new SlowProvider("x");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    await context.load();
    const write = context.setBlock("memory", "y");
    await settle();
    expect(context.removeBlock("memory")).toBe(true);
    provider.calls[0]?.gate.resolve();
    await write;
    expect(context.getBlock("memory")).toBeNull();
    expect(context.getBlocks()).toEqual([]);
  });
});
