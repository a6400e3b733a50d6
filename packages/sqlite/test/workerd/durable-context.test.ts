import { abortAllDurableObjects } from "cloudflare:test";
import type { ContextConfig } from "@contextblocks/core";
import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { createDurableContext, SqliteContextProvider } from "../../src/index.js";
import { AGENTS_CREATE, AGENTS_UPSERT } from "../agents-context-statements.js";
import { inObject } from "./in-object.js";

/** Block configs whose read-only block counts its reads. */
function configs() {
  const counter = { reads: 0 };
  const blocks: ContextConfig[] = [
    {
      label: "soul",
      provider: {
        get: async () => {
          counter.reads += 1;
          return "You are a careful assistant.";
        },
      },
    },
    { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
    { label: "project", description: "What we are building" },
  ];
  return { counter, blocks };
}

describe("createDurableContext in a Durable Object", () => {
  it("cold start: a new ContextBlocks on the same storage serves the identical prompt, reading no block", async () => {
    const frozen = await inObject("cold-start", async (state) => {
      const { blocks } = configs();
      const context = createDurableContext(state.storage, blocks);
      await context.setBlock("memory", "Prefers TypeScript.");
      await context.setBlock("project", "A context library.");
      const prompt = await context.freezeSystemPrompt();
      await context.setBlock("memory", "Changed after the freeze.");
      return prompt;
    });
    expect(frozen).toContain("Prefers TypeScript.");

    // Evict every object: the next call constructs the Durable Object again (a cold wake).
    await abortAllDurableObjects();

    const cold = await inObject("cold-start", async (state) => {
      const { counter, blocks } = configs();
      const reports: StatementReport[] = [];
      const context = createDurableContext(state.storage, blocks, {
        onStatement: (report) => reports.push(report),
      });
      const prompt = await context.freezeSystemPrompt();
      const afterCold = [...reports];
      const warm = await context.freezeSystemPrompt();
      return { prompt, warm, afterCold, afterWarm: reports.length, soulReads: counter.reads };
    });
    expect(cold.prompt).toBe(frozen);
    expect(cold.warm).toBe(frozen);
    expect(cold.soulReads).toBe(0);
    expect(cold.afterCold).toEqual([
      {
        text: "SELECT content, prompt_fingerprint FROM cf_agents_context_blocks WHERE label = ?",
        rowsRead: 1,
        rowsWritten: 0,
      },
    ]);
    expect(cold.afterWarm).toBe(1);
  });

  it("keeps namespaces apart in one object, and the prompt store per namespace", async () => {
    await inObject("namespaces", async (state) => {
      const one = createDurableContext(state.storage, [{ label: "memory" }], { namespace: "session-1" });
      const two = createDurableContext(state.storage, [{ label: "memory" }], { namespace: "session-2" });
      await one.setBlock("memory", "only in session one");
      const promptOne = await one.freezeSystemPrompt();
      expect(promptOne).toContain("only in session one");
      expect(await two.freezeSystemPrompt()).not.toContain("only in session one");
      const stored = new SqliteContextProvider(state.storage, {
        label: "_system_prompt",
        namespace: "session-1",
      });
      expect(await stored.get()).toBe(promptOne);
      expect(await new SqliteContextProvider(state.storage, "_system_prompt").get()).toBeNull();
    });
  });

  it("refuses a block labelled _system_prompt", async () => {
    await inObject("reserved", (state) => {
      expect(() => createDurableContext(state.storage, [{ label: "_system_prompt" }])).toThrow(/reserved/);
    });
  });

  it("a table agents/context created is read without the fingerprint column, and the next freeze adds it: one row written", async () => {
    const result = await inObject("agents-table", async (state) => {
      state.storage.sql.exec(AGENTS_CREATE);
      const { blocks } = configs();
      // The prompt an earlier release stored, rendered from this configuration, without a fingerprint.
      const rendered = await createDurableContext(state.storage, blocks).previewSystemPrompt();
      state.storage.sql.exec(AGENTS_UPSERT, "_system_prompt", rendered, rendered);
      const drifts: string[] = [];
      const cold = createDurableContext(state.storage, blocks, { onDrift: (reason) => drifts.push(reason) });
      const served = await cold.freezeSystemPrompt();
      const reports: StatementReport[] = [];
      const refreshing = createDurableContext(state.storage, blocks, {
        onStatement: (report) => reports.push(report),
      });
      await refreshing.refreshSystemPrompt();
      const written = reports.filter((report) => report.text.startsWith("INSERT"));
      const columns = [...state.storage.sql.exec("PRAGMA table_info(cf_agents_context_blocks)")].map(
        (column) => column.name,
      );
      return { rendered, served, drifts, columns, rowsWritten: written.at(-1)?.rowsWritten };
    });
    expect(result.served).toBe(result.rendered);
    expect(result.drifts).toEqual([]);
    expect(result.columns).toContain("prompt_fingerprint");
    expect(result.rowsWritten).toBe(1);
  });
});
