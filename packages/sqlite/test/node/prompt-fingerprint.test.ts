import type { ContextConfig } from "@contextblocks/core";
import type { StatementReport } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDurableContext, SqliteContextProvider } from "../../src/index.js";
import { AGENTS_CREATE, AGENTS_SELECT, AGENTS_UPSERT } from "../agents-context-statements.js";

const BLOCKS: ContextConfig[] = [
  { label: "soul", provider: { get: async () => "You are a careful assistant." } },
  { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
];

const SELECT_WITH_FINGERPRINT =
  "SELECT content, prompt_fingerprint FROM cf_agents_context_blocks WHERE label = ?";

describe("the configuration fingerprint in cf_agents_context_blocks (better-sqlite3 file database)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  const fingerprint = () =>
    (
      temporary.database
        .prepare("SELECT prompt_fingerprint FROM cf_agents_context_blocks WHERE label = '_system_prompt'")
        .get() as { prompt_fingerprint: string | null } | undefined
    )?.prompt_fingerprint;

  it("a freeze stores the fingerprint on the prompt's row (one statement); agents/context still reads the prompt", async () => {
    const reports: StatementReport[] = [];
    const context = createDurableContext(temporary.database, BLOCKS, {
      onStatement: (report) => reports.push(report),
    });
    await context.setBlock("memory", "Prefers TypeScript.");
    reports.length = 0;
    const prompt = await context.freezeSystemPrompt();
    expect(fingerprint()).toMatch(/^cb1\./);
    expect(reports.filter((report) => report.text.startsWith("INSERT"))).toHaveLength(1);
    expect(temporary.database.prepare(AGENTS_SELECT).get("_system_prompt")).toEqual({ content: prompt });
  });

  it("a table agents/context created, holding a prompt an earlier release stored, is read, then upgraded by the next write", async () => {
    temporary.database.exec(AGENTS_CREATE);
    // The prompt an earlier release froze: rendered from this configuration, stored without a fingerprint.
    const earlier = createDurableContext(temporary.reopen(), BLOCKS);
    await earlier.setBlock("memory", "Lives in Lisbon.");
    const prompt = await earlier.previewSystemPrompt();
    temporary.database.exec("DROP TABLE cf_agents_context_blocks");
    temporary.database.exec(AGENTS_CREATE);
    temporary.database.prepare(AGENTS_UPSERT).run("_system_prompt", prompt, prompt);

    const onDrift = vi.fn();
    const cold = createDurableContext(temporary.database, BLOCKS, { onDrift });
    expect(await cold.freezeSystemPrompt()).toBe(prompt);
    expect(onDrift).not.toHaveBeenCalled();
    const columns = () =>
      (
        temporary.database.prepare("PRAGMA table_info(cf_agents_context_blocks)").all() as { name: string }[]
      ).map((column) => column.name);
    // A read never writes: the column comes with the next write of the prompt.
    expect(columns()).not.toContain("prompt_fingerprint");
    await cold.refreshSystemPrompt();
    expect(columns()).toContain("prompt_fingerprint");
    expect(fingerprint()).toMatch(/^cb1\./);

    const reports: StatementReport[] = [];
    const again = createDurableContext(temporary.reopen(), BLOCKS, {
      onStatement: (report) => reports.push(report),
    });
    await again.freezeSystemPrompt();
    expect(reports.map((report) => report.text)).toEqual([SELECT_WITH_FINGERPRINT]);
  });

  it("a prompt agents/context rewrote (its upsert keeps our fingerprint) is checked in full: drift is found", async () => {
    const context = createDurableContext(temporary.database, BLOCKS);
    await context.freezeSystemPrompt();
    const stale = fingerprint();
    // agents/context froze a prompt of another configuration (no memory block) into the same row.
    const foreign = await createDurableContext(
      openTemporaryDatabase().database,
      BLOCKS.slice(0, 1),
    ).freezeSystemPrompt();
    temporary.database.prepare(AGENTS_UPSERT).run("_system_prompt", foreign, foreign);
    expect(fingerprint()).toBe(stale);

    const onDrift = vi.fn();
    const cold = createDurableContext(temporary.reopen(), BLOCKS, { onDrift });
    const prompt = await cold.freezeSystemPrompt();
    expect(onDrift).toHaveBeenCalledWith(expect.stringContaining('block "memory"'));
    expect(prompt).toContain("MEMORY (Facts learned about the user)");
  });

  it("a plain set of the prompt (no fingerprint) clears the stored one", async () => {
    const context = createDurableContext(temporary.database, BLOCKS);
    const prompt = await context.freezeSystemPrompt();
    expect(fingerprint()).not.toBeNull();
    await new SqliteContextProvider(temporary.database, { label: "_system_prompt", versions: false }).set(
      prompt,
    );
    expect(fingerprint()).toBeNull();
    const onDrift = vi.fn();
    expect(await createDurableContext(temporary.reopen(), BLOCKS, { onDrift }).freezeSystemPrompt()).toBe(
      prompt,
    );
    expect(onDrift).not.toHaveBeenCalled();
  });

  it("a configuration changed between deploys is drift, although the row has a fingerprint", async () => {
    await createDurableContext(temporary.database, BLOCKS).freezeSystemPrompt();
    const onDrift = vi.fn();
    const changed: ContextConfig[] = [
      BLOCKS[0] as ContextConfig,
      { ...BLOCKS[1], maxTokens: 2_000 } as ContextConfig,
    ];
    const prompt = await createDurableContext(temporary.reopen(), changed, { onDrift }).freezeSystemPrompt();
    expect(onDrift).toHaveBeenCalledTimes(1);
    expect(prompt).toContain("/2000 tokens]");
  });
});
