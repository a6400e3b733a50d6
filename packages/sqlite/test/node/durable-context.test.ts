import { type ContextConfig, isContextError } from "@contextblocks/core";
import type { StatementReport } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDurableContext, SqliteContextProvider } from "../../src/index.js";

/** A read-only block whose provider counts its reads. */
function countingSoul() {
  const counter = { reads: 0 };
  const config: ContextConfig = {
    label: "soul",
    provider: {
      get: async () => {
        counter.reads += 1;
        return "You are a careful assistant.";
      },
    },
  };
  return { counter, config };
}

describe("createDurableContext on better-sqlite3 (file database)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("persists blocks without a provider and the frozen prompt under _system_prompt", async () => {
    const soul = countingSoul();
    const context = createDurableContext(temporary.database, [
      soul.config,
      { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
    ]);
    await context.setBlock("memory", "Prefers TypeScript.");
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("Prefers TypeScript.");
    expect(prompt).toContain("You are a careful assistant.");
    expect(await new SqliteContextProvider(temporary.database, "_system_prompt").get()).toBe(prompt);
    expect(await new SqliteContextProvider(temporary.database, "memory").get()).toBe("Prefers TypeScript.");
  });

  it("cold start after closing and reopening the file: the identical prompt, one statement, no block read", async () => {
    const first = countingSoul();
    const configs = (soul: ContextConfig): ContextConfig[] => [
      soul,
      { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
    ];
    const context = createDurableContext(temporary.database, configs(first.config));
    await context.setBlock("memory", "Lives in Lisbon.");
    const frozen = await context.freezeSystemPrompt();
    // Changing a block after freezing must not change what a cold start serves.
    await context.setBlock("memory", "Moved to Porto.");

    const reopened = temporary.reopen();
    const second = countingSoul();
    const reports: StatementReport[] = [];
    const cold = createDurableContext(reopened, configs(second.config), {
      onStatement: (report) => reports.push(report),
    });
    const coldPrompt = await cold.freezeSystemPrompt();
    expect(coldPrompt).toBe(frozen);
    expect(second.counter.reads).toBe(0);
    expect(reports.map((report) => report.text)).toEqual([
      "SELECT content, prompt_fingerprint FROM cf_agents_context_blocks WHERE label = ?",
    ]);
    // Warm: no statement at all.
    expect(await cold.freezeSystemPrompt()).toBe(frozen);
    expect(reports).toHaveLength(1);
    // The one deliberate rebuild picks up the new value.
    expect(await cold.refreshSystemPrompt()).toContain("Moved to Porto.");
  });

  it("persists an empty prompt too, and a cold start takes it as a hit", async () => {
    await createDurableContext(temporary.database, []).freezeSystemPrompt();
    const reports: StatementReport[] = [];
    const cold = createDurableContext(temporary.reopen(), [], {
      onStatement: (report) => reports.push(report),
    });
    expect(await cold.freezeSystemPrompt()).toBe("");
    expect(reports).toHaveLength(1);
  });

  it("keeps namespaces apart: two sessions in one database", async () => {
    const one = createDurableContext(temporary.database, [{ label: "memory" }], { namespace: "session-1" });
    const two = createDurableContext(temporary.database, [{ label: "memory" }], { namespace: "session-2" });
    await one.setBlock("memory", "only in session one");
    const promptOne = await one.freezeSystemPrompt();
    const promptTwo = await two.freezeSystemPrompt();
    expect(promptOne).toContain("only in session one");
    expect(promptTwo).not.toContain("only in session one");
    const plain = createDurableContext(temporary.database, [{ label: "memory" }]);
    expect(await plain.freezeSystemPrompt()).not.toContain("only in session one");
    expect(
      await new SqliteContextProvider(temporary.database, {
        label: "_system_prompt",
        namespace: "session-1",
      }).get(),
    ).toBe(promptOne);
  });

  it("refuses a user block labelled _system_prompt, at construction and at run time", async () => {
    const error = (() => {
      try {
        createDurableContext(temporary.database, [{ label: "_system_prompt" }]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(isContextError(error) && error.code).toBe("INVALID_CONFIG");
    expect((error as Error).message).toMatch(/"_system_prompt" is reserved/);
    const context = createDurableContext(temporary.database, []);
    await expect(
      context.addBlock({ label: "_system_prompt", provider: { get: async () => "x" } }),
    ).rejects.toThrow(/reserved/);
  });

  it("passes core options through (token counter)", async () => {
    const context = createDurableContext(temporary.database, [{ label: "memory", maxTokens: 10 }], {
      tokenCounter: (text) => text.length,
    });
    await expect(context.setBlock("memory", "x".repeat(11))).rejects.toThrow(/11/);
    await context.setBlock("memory", "x".repeat(10));
    expect(await new SqliteContextProvider(temporary.database, "memory").get()).toBe("x".repeat(10));
  });
});
