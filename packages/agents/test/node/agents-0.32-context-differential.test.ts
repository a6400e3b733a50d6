import { AgentContextProvider, ContextBlocks } from "@contextblocks/agents/experimental/memory/session";
import { agentsHost } from "@contextblocks/test-kit/sqlite";
import {
  ContextBlocks as AgentsContextBlocks,
  AgentContextProvider as AgentsContextProvider,
} from "agents-context/context";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withoutTokenFigures } from "../observed-value.js";

// A randomized differential against agents@0.32.0's `agents/context`: fast-check generates sequences of block
// writes, reads, renders, reminders, the tools' set_context and a woken object, and each runs on agents'
// `ContextBlocks` and the entry's, each over its own SQLite database. What the README lists as different is
// normalised: token figures (core's estimate: the compaction helpers' row) and error wording (a throw is
// compared as a throw; a tool's refusal by agents' words: the error messages' row).

type AnyBlocks = AgentsContextBlocks | ContextBlocks;

type Operation =
  | { kind: "setBlock" | "appendToBlock"; label: string; content: string }
  | { kind: "getBlock"; label: string }
  | { kind: "getBlocks" | "load" | "freeze" | "refresh" | "reminder" | "reopen" }
  | { kind: "set_context"; label: string; content: string; action: "replace" | "append" | undefined };

const text = fc
  .array(fc.constantFrom("the", "tide", "café", "🚀", "'q'", '"dq"', "\n", "line\n", "-"), { maxLength: 8 })
  .map((words) => words.join(" "));
/** `memory` (maxTokens 40) gets short writes or ones far over the limit: the estimates differ near it. */
const shortText = fc
  .array(fc.constantFrom("tide", "high", "six"), { minLength: 1, maxLength: 4 })
  .map((words) => words.join(" "));
const hugeText = fc.constantFrom("word ".repeat(300));
/** Blocks other than `memory`: mostly the writable ones. */
const label = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("journal", "notes") },
  fc.constantFrom("soul", "unknown"),
);

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.oneof(
      fc.record({
        kind: fc.constantFrom("setBlock" as const, "appendToBlock" as const),
        label,
        content: text,
      }),
      fc.record({ kind: fc.constant("setBlock" as const), label: fc.constant("memory"), content: shortText }),
      fc.record({
        kind: fc.constantFrom("setBlock" as const, "appendToBlock" as const),
        label: fc.constant("memory"),
        content: hugeText,
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.record({
        kind: fc.constant("set_context" as const),
        label,
        content: text,
        action: fc.constantFrom("replace" as const, "append" as const, undefined),
      }),
      fc.record({
        kind: fc.constant("set_context" as const),
        label: fc.constant("memory"),
        content: shortText,
        action: fc.constant("replace" as const),
      }),
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("getBlock" as const), label }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        "getBlocks" as const,
        "load" as const,
        "freeze" as const,
        "refresh" as const,
        "reminder" as const,
        "reopen" as const,
      ),
    }),
  },
);

/** A block as agents@0.32.0 reports it (the entry's has more fields), its token figure left out. */
function blockShape(block: ReturnType<AnyBlocks["getBlock"]>): unknown {
  if (block === null) return null;
  const { label, description, content, maxTokens, writable, isSearchable } = block;
  return { label, description, content, maxTokens, writable, isSearchable };
}

/** Token figures replaced: the two estimates differ (the compaction helpers' row). */
const withoutTokens = (rendered: string) =>
  withoutTokenFigures(rendered).replace(/\d+% \(\d+\/\d+ tokens\)|\d+ tokens/g, "<tokens>");

/** A tool's answer: a refusal compared by agents' words, which the entry's error text keeps. */
function toolAnswer(answer: unknown): unknown {
  if (typeof answer !== "string") return answer;
  if (answer.startsWith("Error: ")) {
    const words = ["readonly", "exceeds maxTokens", "not found"].filter((word) =>
      answer.toLowerCase().includes(word.toLowerCase()),
    );
    return `refused: ${words.join(", ")}`;
  }
  return withoutTokens(answer);
}

async function act(blocks: AnyBlocks, operation: Operation): Promise<unknown> {
  switch (operation.kind) {
    case "setBlock":
      return blockShape(await blocks.setBlock(operation.label, operation.content));
    case "appendToBlock":
      return blockShape(await blocks.appendToBlock(operation.label, operation.content));
    case "getBlock":
      return blockShape(blocks.getBlock(operation.label));
    case "getBlocks":
      return blocks.getBlocks().map(blockShape);
    case "load":
      return blocks.load();
    case "freeze":
      return withoutTokens(await blocks.freezeSystemPrompt());
    case "refresh":
      return withoutTokens(await blocks.refreshSystemPrompt());
    case "reminder": {
      const reminder = await blocks.reminder();
      return reminder === null ? null : withoutTokens(reminder);
    }
    case "set_context": {
      const tools = (await blocks.tools()) as Record<
        string,
        { execute(input: unknown, options: unknown): unknown }
      >;
      const { label: block, content, action } = operation;
      const input = action === undefined ? { label: block, content } : { label: block, content, action };
      return toolAnswer(await tools.set_context?.execute(input, { toolCallId: "t", messages: [] }));
    }
    case "reopen":
      return undefined;
  }
}

/** What each step observed on one implementation, a woken object opening the blocks again on the same database. */
async function observe(
  implementation: "agents" | "entry",
  operations: readonly Operation[],
): Promise<unknown[]> {
  const database = new Database(":memory:");
  try {
    const agent = agentsHost(database);
    const open = (): AnyBlocks => {
      const configs = [
        { label: "soul", provider: { get: async () => "Fixed soul." } },
        { label: "journal", description: "Journal 'q'", whenChanged: "remind" as const },
        { label: "notes", description: "Notes" },
        { label: "memory", description: "Facts", maxTokens: 40 },
      ];
      if (implementation === "agents") {
        const provided = configs.map((config) =>
          "provider" in config
            ? config
            : { ...config, provider: new AgentsContextProvider(agent, config.label) },
        );
        return new AgentsContextBlocks(provided, new AgentsContextProvider(agent, "_system_prompt"));
      }
      const provided = configs.map((config) =>
        "provider" in config
          ? config
          : { ...config, provider: new AgentContextProvider(agent, config.label) },
      );
      return new ContextBlocks(provided, new AgentContextProvider(agent, "_system_prompt"));
    };
    let blocks = open();
    const log: unknown[] = [];
    for (const operation of operations) {
      if (operation.kind === "reopen") {
        blocks = open();
        continue;
      }
      try {
        log.push([operation, await act(blocks, operation)]);
      } catch {
        log.push([operation, "<throws>"]);
      }
    }
    return log;
  } finally {
    database.close();
  }
}

/** Runs and steps kept small enough for a loaded 2-core machine; raise them locally to hunt. */
const settings = { seed: 20261206, numRuns: 200 };

describe("the entry's ContextBlocks against agents@0.32.0's agents/context, on generated sequences", () => {
  it("observes the same after every step: blocks, the rendered prompt, reminders and set_context", async () => {
    const sequence = fc.array(operation, { minLength: 1, maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(sequence, async (operations) => {
        const steps = [...operations, { kind: "refresh" } as const, { kind: "getBlocks" } as const];
        expect(await observe("entry", steps)).toEqual(await observe("agents", steps));
      }),
      settings,
    );
  }, 300_000);
});
