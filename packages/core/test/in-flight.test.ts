import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextBlocks, type SearchProvider, type WritableContextProvider } from "../src/index.js";
import { deferred, settle } from "./helpers.js";

/** A provider whose `get` answers only when the test says so (while `holding`), with the value it had when called. */
class SlowProvider implements WritableContextProvider {
  holding = false;
  readonly pending: Array<() => void> = [];
  constructor(public value: string | null) {}
  get(): Promise<string | null> {
    const snapshot = this.value;
    if (!this.holding) return Promise.resolve(snapshot);
    const answer = deferred<string | null>();
    this.pending.push(() => answer.resolve(snapshot));
    return answer.promise;
  }
  async set(content: string): Promise<void> {
    this.value = content;
  }
}

describe("a read in flight never undoes a write (issue 12, item 2)", () => {
  it("an append overlapping a slow read keeps its text, and the next append builds on it", async () => {
    const provider = new SlowProvider("a");
    const context = new ContextBlocks([{ label: "notes", provider, whenChanged: "remind" }]);
    await context.load();
    provider.holding = true;
    const reading = context.load(); // reads "a", answers late
    const appending = context.appendToBlock("notes", "b");
    await settle();
    provider.holding = false;
    for (const answer of provider.pending.splice(0)) answer();
    await Promise.all([reading, appending]);
    await context.appendToBlock("notes", "c");
    expect(provider.value).toBe("a\nb\nc");
    expect(context.getBlock("notes")?.content).toBe("a\nb\nc");
  });

  it("a reminder() overlapping a write does not put the old value back in the cache", async () => {
    const provider = new SlowProvider("old");
    const context = new ContextBlocks([{ label: "status", provider, whenChanged: "remind" }]);
    await context.freezeSystemPrompt();
    provider.holding = true;
    const reminding = context.reminder();
    const writing = context.setBlock("status", "new");
    await settle();
    provider.holding = false;
    for (const answer of provider.pending.splice(0)) answer();
    await Promise.all([reminding, writing]);
    expect(context.getBlock("status")?.content).toBe("new");
    await context.appendToBlock("status", "more");
    expect(provider.value).toBe("new\nmore");
  });
});

type Operation =
  | { type: "set"; text: string }
  | { type: "append"; text: string }
  | { type: "setEntry"; key: string; text: string }
  | { type: "reminder" }
  | { type: "load" }
  | { type: "get" };

const text = fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom("a", "b", "\n", " ") });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ type: fc.constant("set" as const), text }),
  fc.record({ type: fc.constant("append" as const), text }),
  fc.record({ type: fc.constant("setEntry" as const), key: fc.constantFrom("k1", "k2"), text }),
  fc.constant({ type: "reminder" as const }),
  fc.constant({ type: "load" as const }),
  fc.constant({ type: "get" as const }),
);

/** What the block and the entries hold after the operations, in call order. */
function model(operations: readonly Operation[]): { notes: string; entries: Map<string, string> } {
  let notes = "";
  const entries = new Map<string, string>();
  for (const op of operations) {
    if (op.type === "set") notes = op.text;
    if (op.type === "append") {
      const separator = notes.length > 0 && !notes.endsWith("\n") && !op.text.startsWith("\n") ? "\n" : "";
      notes = notes + separator + op.text;
    }
    if (op.type === "setEntry") entries.set(op.key, op.text);
  }
  return { notes, entries };
}

describe("write queue property: random interleavings on out-of-order providers", () => {
  it("the providers end equal to the model of the operations, and so does the cache", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(operation, { maxLength: 12 }),
        async (scheduler, operations) => {
          let notes: string | null = null;
          // Every provider answer is released in an order fast-check chooses: out of order across calls.
          const notesProvider: WritableContextProvider = {
            get: () => scheduler.schedule(Promise.resolve(notes), "notes.get"),
            set: (content) =>
              scheduler.schedule(Promise.resolve(), "notes.set").then(() => {
                notes = content;
              }),
          };
          const entries = new Map<string, string>();
          const knowledge: SearchProvider = {
            get: () => {
              const count = entries.size;
              return scheduler.schedule(Promise.resolve(count === 0 ? null : `${count} entries`), "k.get");
            },
            search: async () => null,
            set: (key, content) =>
              scheduler.schedule(Promise.resolve(), "k.set").then(() => {
                entries.set(key, content);
              }),
          };
          const context = new ContextBlocks([
            { label: "notes", provider: notesProvider, whenChanged: "remind" },
            { label: "knowledge", provider: knowledge, whenChanged: "remind" },
          ]);
          await scheduler.waitFor(context.freezeSystemPrompt());
          const running = operations.map((op) => {
            switch (op.type) {
              case "set":
                return context.setBlock("notes", op.text);
              case "append":
                return context.appendToBlock("notes", op.text);
              case "setEntry":
                return context.setEntry("knowledge", op.key, op.text);
              case "reminder":
                return context.reminder();
              case "load":
                return context.load();
              default:
                return Promise.resolve(context.getBlock("notes"));
            }
          });
          await scheduler.waitFor(Promise.all(running));
          const expected = model(operations);
          expect(notes ?? "").toBe(expected.notes);
          expect(entries).toEqual(expected.entries);
          expect(context.getBlock("notes")?.content ?? "").toBe(expected.notes);
        },
      ),
      { numRuns: process.env.CI ? 150 : 100, ...(process.env.CI ? { seed: 20261130 } : {}) },
    );
  });
});
