import {
  ContextBlocks,
  type ContextConfig,
  type ContextProvider,
  type ContextToolSpec,
} from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { type ContextToolName, SECTION_RULE } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { expectSameText } from "./compare.js";
import { countCalls } from "./counting.js";
import { HOSTILE_QUERIES } from "./hostile-queries.js";
import { SKILL_TEXT } from "./loadable.js";
import { GENERAL_ENTRIES, NO_MATCH_QUERY } from "./search-corpus.js";
import { check, firstMissing, group, needsReopen, type Suite } from "./suite.js";
import { ROUND_TRIP_TEXTS } from "./texts.js";

const LABEL = "notes";
const DESCRIPTION = "Conformance block";
const READ_METHODS = ["get", "search", "load"] as const;

/**
 * Through `ContextBlocks`: the provider behind a real block renders with the right marker, freezes,
 * survives a cold start (also as the prompt store), and the tools its kind allows work end to end.
 */
export function throughContextGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const { kind, declared, options } = suite;
  const header = `${LABEL.toUpperCase()} (${DESCRIPTION}) [${kind}]`;
  const writableOnly = kind === "writable" ? null : "writable providers only";
  const searchableOnly = kind === "searchable" ? null : "searchable providers only";
  const loadableOnly = kind === "loadable" ? null : "loadable providers only";
  const needsKeyedSet = declared.writable ? null : "needs set(key, …)";

  group("through ContextBlocks", suite, true, (fixture) => {
    const config = (provider: ContextProvider): ContextConfig => ({
      label: LABEL,
      description: DESCRIPTION,
      provider,
    });

    /**
     * Writes round `round`'s content into the block through `ContextBlocks` (or the seed option), after
     * `ContextBlocks` has initialised the provider. Returns text the rendered section must then contain,
     * or `null` when this provider cannot be written to.
     */
    async function fill(context: ContextBlocks, provider: P, round: number): Promise<string | null> {
      await context.load();
      if (kind === "writable") {
        const text = `Round ${round}: the user prefers metric units. Ünïcödé ✅`;
        await context.setBlock(LABEL, text);
        return text;
      }
      if (kind === "searchable") {
        if (!declared.writable) return null;
        await context.setEntry(LABEL, `kb-round-${round}`, `Round ${round}: notes about lighthouses.`);
        return (await provider.get()) ?? "";
      }
      if (kind === "loadable") {
        if (!declared.writable) return null;
        await context.setEntry(LABEL, `round-${round}`, `Round ${round} text.`, `Round ${round} description`);
        return `Round ${round} description`;
      }
      if (!options.seed) return null;
      const text = `Round ${round}: read-only text.`;
      await options.seed(provider, text);
      return text;
    }

    /**
     * A block as an agent has it when the model calls a tool: the prompt is frozen first (turn one).
     */
    async function agentContext(provider: P): Promise<ContextBlocks> {
      const context = new ContextBlocks([config(provider)]);
      await context.freezeSystemPrompt();
      return context;
    }

    function tool(context: ContextBlocks, name: ContextToolName): ContextToolSpec {
      const spec = context.toolSpecs().find((candidate) => candidate.name === name);
      if (!spec) expect.fail(`toolSpecs() has no ${name}`);
      return spec;
    }

    async function run(spec: ContextToolSpec, input: Record<string, unknown>): Promise<string> {
      const result = await spec.execute(input);
      expect(typeof result.text, `${spec.name}.execute() resolves to an outcome with text`).toBe("string");
      expect(typeof result.isError, `${spec.name}.execute() resolves to an outcome with isError`).toBe(
        "boolean",
      );
      return result.text;
    }

    check(suite, `a block backed by the provider renders with the [${kind}] marker`, null, async () => {
      const provider = await fixture.create();
      const context = new ContextBlocks([config(provider)]);
      const written = await fill(context, provider, 1);
      const prompt = await context.freezeSystemPrompt();
      const current = await provider.get();
      if (kind === "readonly" && !current) {
        expect(prompt, "an empty read-only block is left out").not.toContain(header);
        return;
      }
      expect(prompt).toContain(`${SECTION_RULE}\n${header}\n${SECTION_RULE}\n`);
      if (written !== null) expect(prompt).toContain(written);
    });

    check(suite, "writes leave the frozen prompt unchanged until refreshSystemPrompt()", null, async () => {
      const provider = await fixture.create();
      const context = new ContextBlocks([config(provider)]);
      await fill(context, provider, 1);
      const frozen = await context.freezeSystemPrompt();
      expect(await context.freezeSystemPrompt(), "a second freeze").toBe(frozen);
      const written = await fill(context, provider, 2);
      expect(await context.freezeSystemPrompt(), "freeze after a write").toBe(frozen);
      if (written === null) return;
      const refreshed = await context.refreshSystemPrompt();
      expect(refreshed, "the refreshed prompt shows the new content").toContain(written);
      expect(refreshed).not.toBe(frozen);
      expect(await context.freezeSystemPrompt(), "freeze after a refresh").toBe(refreshed);
    });

    check(suite, "a cold start serves the stored prompt without reading the provider", null, async () => {
      const memory = new InMemoryStore();
      const provider = await fixture.create();
      const first = new ContextBlocks([config(provider)], new InMemoryContextProvider({ store: memory }));
      await fill(first, provider, 1);
      const frozen = await first.freezeSystemPrompt();
      const counted = countCalls(options.reopen ? await fixture.reopen(provider) : provider);
      const second = new ContextBlocks(
        [config(counted.provider)],
        new InMemoryContextProvider({ store: memory }),
      );
      expectSameText(await second.freezeSystemPrompt(), frozen, "the prompt after a cold start");
      for (const method of READ_METHODS) {
        expect(counted.calls(method), `${method}() was called on a cold start`).toBe(0);
      }
    });

    check(
      suite,
      "as the prompt store: a cold start returns the stored prompt byte for byte",
      firstMissing(writableOnly, needsReopen(suite)),
      async () => {
        const store = await fixture.create();
        const provider = await fixture.create();
        const first = new ContextBlocks(
          [config(provider)],
          store as P & { set(content: string): Promise<void> },
        );
        await first.load();
        await first.setBlock(LABEL, ROUND_TRIP_TEXTS.map((text) => text.content).join("\n"));
        const frozen = await first.freezeSystemPrompt();
        const counted = countCalls(await fixture.reopen(provider));
        const restartedStore = (await fixture.reopen(store)) as P & { set(content: string): Promise<void> };
        const second = new ContextBlocks([config(counted.provider)], restartedStore);
        expectSameText(await second.freezeSystemPrompt(), frozen, "the prompt after a cold start");
        expect(counted.calls("get"), "the block's get() was called on a cold start").toBe(0);
      },
    );

    check(
      suite,
      "as the prompt store: an empty frozen prompt survives a cold start",
      firstMissing(writableOnly, needsReopen(suite)),
      async () => {
        const store = (await fixture.create()) as P & { set(content: string): Promise<void> };
        const empty = { get: async () => null };
        const first = new ContextBlocks([{ label: "empty", provider: empty }], store);
        expect(await first.freezeSystemPrompt(), "a prompt of one empty read-only block").toBe("");
        const counted = countCalls(empty);
        const restartedStore = (await fixture.reopen(store)) as P & { set(content: string): Promise<void> };
        const second = new ContextBlocks([{ label: "empty", provider: counted.provider }], restartedStore);
        expect(await second.freezeSystemPrompt()).toBe("");
        expect(counted.calls("get"), "the empty prompt was stored as a miss: get() was called").toBe(0);
      },
    );

    check(
      suite,
      "as the prompt store: refreshSystemPrompt() replaces the stored prompt",
      firstMissing(writableOnly, needsReopen(suite)),
      async () => {
        const store = (await fixture.create()) as P & { set(content: string): Promise<void> };
        const provider = await fixture.create();
        const first = new ContextBlocks([config(provider)], store);
        await fill(first, provider, 1);
        await first.freezeSystemPrompt();
        await fill(first, provider, 2);
        const refreshed = await first.refreshSystemPrompt();
        const counted = countCalls(await fixture.reopen(provider));
        const restartedStore = (await fixture.reopen(store)) as P & { set(content: string): Promise<void> };
        const second = new ContextBlocks([config(counted.provider)], restartedStore);
        expectSameText(await second.freezeSystemPrompt(), refreshed, "the prompt after a cold start");
        expect(counted.calls("get"), "the block's get() was called on a cold start").toBe(0);
      },
    );

    check(suite, "toolSpecs() offers the tools the block's kind allows", null, async () => {
      const context = new ContextBlocks([config(await fixture.create())]);
      const names = context.toolSpecs().map((spec) => spec.name);
      expect([...names].sort()).toEqual(expectedTools(kind, declared.writable).sort());
      for (const spec of context.toolSpecs()) {
        expect(typeof spec.description).toBe("string");
        expect(typeof spec.execute).toBe("function");
      }
    });

    check(suite, "set_context replaces and appends to the block in the provider", writableOnly, async () => {
      const provider = await fixture.create();
      const context = await agentContext(provider);
      const setContext = tool(context, "set_context");
      expect(await run(setContext, { label: LABEL, content: "first line" })).toMatch(/^Written to notes\./);
      expectSameText(await provider.get(), "first line", "the provider after set_context");
      expect(await run(setContext, { label: LABEL, content: "second line", action: "append" })).toMatch(
        /^Written to notes\./,
      );
      expectSameText(await provider.get(), "first line\nsecond line", "the provider after an append");
    });

    check(
      suite,
      "set_context indexes an entry and search_context finds it",
      firstMissing(searchableOnly, needsKeyedSet),
      async () => {
        const provider = await fixture.create();
        const context = await agentContext(provider);
        const setContext = tool(context, "set_context");
        const searchContext = tool(context, "search_context");
        const content = GENERAL_ENTRIES.ferry.content;
        const metadata = { title: "Ferry timetable" };
        expect(await run(setContext, { label: LABEL, content, metadata })).toBe(
          'Indexed "ferry-timetable" in notes.',
        );
        expect(await run(searchContext, { label: LABEL, query: "When does the ferry leave?" })).toContain(
          content,
        );
        expect(await run(searchContext, { label: LABEL, query: NO_MATCH_QUERY })).toBe("No results found.");
        const updated = "The ferry to the island now leaves at ten.";
        await run(setContext, { label: LABEL, content: updated, metadata });
        const result = await run(searchContext, { label: LABEL, query: "ferry island" });
        expect(result, "the updated entry").toContain(updated);
        expect(result, "the entry was updated in place").not.toContain(content);
      },
    );

    check(
      suite,
      "search_context answers hostile queries with matches or No results found., never an error",
      searchableOnly,
      async () => {
        const provider = await fixture.create();
        const context = await agentContext(provider);
        if (declared.writable) await context.setEntry(LABEL, "kb-smoothie", "A mango and papaya smoothie.");
        const searchContext = tool(context, "search_context");
        for (const hostile of HOSTILE_QUERIES.filter((candidate) => candidate.query.trim() !== "")) {
          const result = await run(searchContext, { label: LABEL, query: hostile.query });
          expect(result.startsWith("Error:"), `search_context(${hostile.name}) returned ${result}`).toBe(
            false,
          );
        }
      },
    );

    check(
      suite,
      "load_context returns the full text of an entry set_context wrote",
      firstMissing(loadableOnly, needsKeyedSet),
      async () => {
        const provider = await fixture.create();
        const context = await agentContext(provider);
        const metadata = { title: "Deploy guide", description: "How to deploy the worker" };
        expect(await run(tool(context, "set_context"), { label: LABEL, content: SKILL_TEXT, metadata })).toBe(
          'Indexed "deploy-guide" in notes.',
        );
        expect((await provider.get()) ?? "", "the listing").toContain("How to deploy the worker");
        const loaded = await run(tool(context, "load_context"), { label: LABEL, key: "deploy-guide" });
        expectSameText(loaded, SKILL_TEXT, "load_context");
        expect(await run(tool(context, "unload_context"), { label: LABEL, key: "deploy-guide" })).toMatch(
          /^Unloaded/,
        );
      },
    );

    check(
      suite,
      "load_context of an unknown key answers with an error the model can act on",
      loadableOnly,
      async () => {
        const context = await agentContext(await fixture.create());
        const result = await run(tool(context, "load_context"), { label: LABEL, key: "never-written" });
        expect(result).toMatch(/^Error: no entry "never-written"/);
      },
    );
  });
}

function expectedTools(kind: string, writable: boolean): ContextToolName[] {
  const write: ContextToolName[] = writable ? ["set_context"] : [];
  if (kind === "searchable") return [...write, "search_context"];
  if (kind === "loadable") return [...write, "load_context", "unload_context"];
  if (kind === "writable") return ["set_context", "edit_context"];
  return [];
}
