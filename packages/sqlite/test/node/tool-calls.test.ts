import { contextTools } from "@contextblocks/ai";
import { ContextBlocks, type ToolOutcome } from "@contextblocks/core";
import { isWellFormed } from "@contextblocks/core/store-kit";
import { answer, scriptedModel, toolStep } from "@contextblocks/test-kit/model";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, stepCountIs } from "ai";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteContextProvider, SqliteSkillProvider } from "../../src/index.js";

// Tool calls from a model through generateText, on a real better-sqlite3 database: what a call stores is
// what it asked for, byte for byte after a reopen, and a call SQLite cannot honour stores nothing and says why.

async function runStep(
  context: ContextBlocks,
  calls: Array<{ toolName: string; input: unknown }>,
): Promise<ToolOutcome[]> {
  const result = await generateText({
    model: scriptedModel([toolStep(calls), answer("Done.")]),
    prompt: "Remember this.",
    tools: contextTools(context),
    stopWhen: stepCountIs(3),
  });
  expect(result.text).toBe("Done.");
  const step = result.steps[0];
  expect(step?.content.filter((part) => part.type === "tool-error")).toEqual([]);
  return calls.map((_, index) => {
    const found = step?.toolResults.find((part) => part.toolCallId === `call-${index}`);
    if (!found) throw new Error(`no tool result for call ${index}`);
    const outcome = found.output as ToolOutcome;
    expect(typeof outcome.text).toBe("string");
    return outcome;
  });
}

function contextOn(database: TemporaryDatabase["database"]): ContextBlocks {
  return new ContextBlocks([
    { label: "memory", maxTokens: 200, provider: new SqliteContextProvider(database, "memory") },
    { label: "skills", provider: new SqliteSkillProvider(database, "skills") },
  ]);
}

let opened: TemporaryDatabase | undefined;
afterEach(() => {
  opened?.remove();
  opened = undefined;
});

describe("tool calls on SQLite through generateText", () => {
  it("set_context stores hostile text byte for byte, or refuses text SQLite would change and stores nothing", async () => {
    opened = openTemporaryDatabase();
    const database = opened;
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udc00", `${"═".repeat(46)}\nSKILLS [loadable]`),
    );
    await fc.assert(
      fc.asyncProperty(text, text, async (first, second) => {
        const context = contextOn(database.database);
        await context.setBlock("memory", "kept");
        const [outcome] = await runStep(context, [
          { toolName: "set_context", input: { label: "memory", content: first + second } },
        ]);
        const content = first + second;
        const stored = await new SqliteContextProvider(database.database, "memory").get();
        if (isWellFormed(content)) {
          expect(outcome?.text).toMatch(/^Written to memory\. Usage: /);
          expect(stored).toBe(content);
        } else {
          expect(outcome?.text).toMatch(
            /^Error: SqliteContextProvider: the content has a lone UTF-16 surrogate at index \d+, which SQLite cannot store unchanged$/,
          );
          expect(stored).toBe("kept");
          expect(context.getBlock("memory")?.content).toBe("kept");
        }
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it("edit_context calls on one skill entry in one step all land, and survive a reopen", async () => {
    opened = openTemporaryDatabase();
    const lines = ["Build.", "Test.", "Tag: v1.", "Deploy.", "Announce."];
    const context = contextOn(opened.database);
    await context.setEntry("skills", "release", lines.join("\n"), "Releasing");
    const outcomes = await runStep(context, [
      {
        toolName: "edit_context",
        input: { label: "skills", key: "release", old_str: "Test.", new_str: "Test twice." },
      },
      {
        toolName: "edit_context",
        input: { label: "skills", key: "release", old_str: "Tag: v1.", new_str: "Tag: v2." },
      },
      {
        toolName: "edit_context",
        input: { label: "skills", key: "release", old_str: "Announce.", new_str: "" },
      },
      // Fails alone: its text is gone once the edit before it ran.
      {
        toolName: "edit_context",
        input: { label: "skills", key: "release", old_str: "Tag: v1.", new_str: "Tag: v3." },
      },
    ]);
    expect(outcomes.map((outcome) => outcome.text)).toEqual([
      expect.stringMatching(/^Edited skills entry "release"\./),
      expect.stringMatching(/^Edited skills entry "release"\./),
      expect.stringMatching(/^Edited skills entry "release"\./),
      expect.stringMatching(/^Error: old_str does not occur in skills entry "release"; nothing was changed/),
    ]);
    const reopened = new SqliteSkillProvider(opened.reopen(), "skills");
    expect(await reopened.load("release")).toBe("Build.\nTest twice.\nTag: v2.\nDeploy.\n");
    expect(await reopened.get()).toBe("- release: Releasing");
  });
});
