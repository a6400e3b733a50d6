import { ContextError } from "@contextblocks/core";
import { errorMessage } from "@contextblocks/core/store-kit";
import type { RunStateStore, RunStates } from "@contextblocks/sessions/store-kit";
import type { ToolSet } from "ai";
import { type HistoryCall, type HistoryPlugin, historyFlags, isHistoryPlugin } from "./history-plugin.js";
import type { ModelCallOptions, ModelContent, RunMessage } from "./model-types.js";
import { checkOfferedTools, mergeOfferedTools, type ToolOffer, toolSetProblem } from "./offered-tools.js";
import type { ContextPlugin } from "./plugin.js";
import { guard, invalidUse } from "./plugin-guard.js";
import { afterView, RunAssembly, type RunBasics } from "./run-assembly.js";
import { type Cursor, continuedCall, RecentCursors } from "./run-cursor.js";
import { checkRunMessages, responseMessages, toRunMessage } from "./run-messages.js";

/** The plugin-options key a call may use to name its session: `{ contextblocks: { sessionId } }`. */
export const PROVIDER_OPTIONS_KEY = "contextblocks";

/** One call between `begin` and `finish`. */
export interface PreparedRun {
  readonly basics: RunBasics;
  /** The call options to send to the model. */
  readonly params: ModelCallOptions;
  /** `params.prompt` starts with the frozen prompt. */
  readonly frozenPrompt: boolean;
  readonly contextMessages: ReadonlyMap<string, readonly RunMessage[]>;
  readonly states: RunStates;
  readonly savedStatesJson: string;
  readonly cursor: Cursor;
  /** The remembered call this one continues (a step of its tool loop), replaced by this one's cursor. */
  readonly continues: Cursor | undefined;
  /** The branch a first model call continues (`providerOptions.contextblocks.parentId`); history plugins get it. */
  readonly branch: Pick<HistoryCall, "parentId">;
}

/**
 * The run pipeline behind `contextMiddleware`: loads state and history, runs every plugin's `beforeCall`,
 * assembles the call; after the model answered, runs every `afterCall` (in reverse order), then stores
 * history and state.
 */
export class RunPipeline {
  readonly #cursors = new RecentCursors();
  readonly #stateStore: RunStateStore;
  readonly #defaultSessionId: string;

  constructor(
    readonly plugins: readonly ContextPlugin[],
    stateStore: RunStateStore,
    defaultSessionId: string,
  ) {
    this.#stateStore = stateStore;
    this.#defaultSessionId = defaultSessionId;
    const seen = new Set<string>();
    let loader: string | undefined;
    for (const plugin of plugins) {
      if (typeof plugin.sourceId !== "string" || plugin.sourceId.length === 0) {
        throw new ContextError("INVALID_CONFIG", "Every plugin needs a non-empty string sourceId.");
      }
      if (seen.has(plugin.sourceId)) {
        throw new ContextError(
          "INVALID_CONFIG",
          `Two plugins have the sourceId "${plugin.sourceId}": it keys their state, so it must be unique.`,
        );
      }
      seen.add(plugin.sourceId);
      if (loadsHistory(plugin)) {
        if (loader !== undefined) {
          throw new ContextError(
            "INVALID_CONFIG",
            `Two history plugins load messages ("${loader}" and "${plugin.sourceId}"): only one may, or the model would see the conversation twice. Give the other loadMessages: false.`,
          );
        }
        loader = plugin.sourceId;
      }
    }
    this.tools();
  }

  /** Every tool the plugins declare, merged (a name clash is an error). */
  tools(): ToolSet {
    return mergeOfferedTools(this.plugins.flatMap((plugin) => declaredOffers(plugin)));
  }

  async begin(params: ModelCallOptions): Promise<PreparedRun> {
    const { sessionId, parentId, providerOptions } = sessionOf(params, this.#defaultSessionId);
    const leading = params.prompt.findIndex((message) => message.role !== "system");
    const split = leading === -1 ? params.prompt.length : leading;
    const callerSystem = params.prompt.slice(0, split);
    const callerMessages = params.prompt.slice(split);
    const callerJson = callerMessages.map((message) => JSON.stringify(message));

    // A step of the SDK's tool loop: only its new messages are input, and the history is the first step's.
    // Of the session's recent calls, the one this call continues (overlapping calls each keep their own).
    const match = continuedCall(this.#cursors.get(sessionId), callerJson, callerMessages);
    const previous = match?.cursor;
    const continued = match?.count ?? null;
    const basics: RunBasics = {
      sessionId,
      inputMessages: callerMessages.slice(continued ?? 0),
    };
    const loaded = continued !== null && previous ? previous.loaded : new Map<string, RunMessage[]>();
    // A continuation goes on from what the first call stored (the latest leaf), not from the named parent.
    const branch = continued === null && parentId !== undefined ? { parentId } : {};

    const savedStates = (await this.#stateStore.load(sessionId)) ?? {};
    // A copy of everything stored, so the state of a plugin not configured today is kept, not dropped.
    // Without a prototype: a plugin named "__proto__" or "constructor" gets its own state, not Object's.
    const states: RunStates = Object.assign(Object.create(null) as RunStates, structuredClone(savedStates));
    for (const plugin of this.plugins) states[plugin.sourceId] ??= {};

    const assembly = new RunAssembly();
    for (const plugin of this.plugins) {
      const state = states[plugin.sourceId]!;
      if (loadsHistory(plugin)) {
        let history = loaded.get(plugin.sourceId);
        if (history === undefined) {
          const stored = await guard(plugin, "getMessages", async () => {
            const messages = await plugin.getMessages(sessionId, { state, ...branch });
            checkRunMessages(messages, `getMessages of "${plugin.sourceId}"`);
            return messages;
          });
          history = stored.map(toRunMessage);
          loaded.set(plugin.sourceId, history);
        }
        if (history.length > 0) assembly.addMessages(plugin.sourceId, history);
      }
      assembly.offerTools(plugin.sourceId, plugin.tools ?? {});
      if (plugin.beforeCall) {
        const view = assembly.beforeView(plugin, basics, state);
        await guard(plugin, "beforeCall", () => plugin.beforeCall!(view));
      }
    }
    await checkOfferedTools(assembly.offers, params.tools);

    const prompt = await assembly.prompt(callerSystem, callerMessages);
    return {
      basics,
      params: { ...params, prompt, ...(providerOptions ? { providerOptions } : {}) } as ModelCallOptions,
      frozenPrompt: assembly.hasFrozenPrompt,
      contextMessages: assembly.contextMessages,
      states,
      savedStatesJson: statesJson(savedStates),
      cursor: { callerMessages: callerJson, loaded },
      continues: previous,
      branch,
    };
  }

  /**
   * A call that never completed (an aborted or failed stream): the caller's new messages are still stored
   * by every history plugin that stores inputs (the caller passes only new messages, so they are in no
   * history yet), once; no `afterCall` runs and no state is saved.
   */
  async keepInputs(run: PreparedRun): Promise<void> {
    const { sessionId, inputMessages } = run.basics;
    if (inputMessages.length === 0) return;
    for (const plugin of this.plugins) {
      if (!isHistoryPlugin(plugin) || !historyFlags(plugin).storeInputs) continue;
      const state = run.states[plugin.sourceId]!;
      await guard(plugin, "saveMessages", () =>
        plugin.saveMessages(sessionId, inputMessages, { state, ...run.branch }),
      );
    }
    this.#cursors.remember(sessionId, { ...run.cursor, loaded: new Map() }, run.continues);
  }

  /**
   * After the model answered: every `afterCall`, then history, then state. A plugin that throws stops it
   * before anything is written; only a failing `saveMessages` can leave earlier history plugins written.
   */
  async finish(
    run: PreparedRun,
    content: readonly ModelContent[],
    usage?: ModelUsage | undefined,
  ): Promise<void> {
    const { sessionId, inputMessages } = run.basics;
    const response = responseMessages(content);
    // In reverse order, as Microsoft Agent Framework does: the first plugin opens the run and closes it.
    for (const plugin of [...this.plugins].reverse()) {
      if (!plugin.afterCall) continue;
      const view = afterView(run.basics, run.contextMessages, response, run.states[plugin.sourceId]!);
      await guard(plugin, "afterCall", () => plugin.afterCall!(view));
    }

    // State first: a state save that fails then leaves nothing written, so a retry of the call does not
    // store the turn twice. (A history plugin that changes its state in saveMessages gets a second save.)
    let savedJson = run.savedStatesJson;
    const saveStates = async () => {
      // One write per run, and none when no plugin changed its state (a Durable Object bills each row).
      const json = statesJson(run.states);
      if (json === savedJson) return;
      await this.#stateStore.save(sessionId, JSON.parse(json) as RunStates);
      savedJson = json;
    };
    await saveStates();

    const addedByPlugins = [...run.contextMessages]
      .filter(([sourceId]) => !this.plugins.some((p) => p.sourceId === sourceId && loadsHistory(p)))
      .flatMap(([, messages]) => messages);
    for (const plugin of this.plugins) {
      if (!isHistoryPlugin(plugin)) continue;
      const flags = historyFlags(plugin);
      const sent = [
        ...(flags.storeContextMessages ? addedByPlugins : []),
        ...(flags.storeInputs ? inputMessages : []),
      ];
      const messages = [...sent, ...(flags.storeOutputs ? response : [])];
      if (messages.length === 0) continue;
      const state = run.states[plugin.sourceId]!;
      const inputTokens = usage?.inputTokens?.total;
      const reported =
        typeof inputTokens === "number" && Number.isFinite(inputTokens) && inputTokens > 0
          ? { usage: { inputTokens, sentMessages: sent.length, ...cacheTokens(usage) } }
          : {};
      await guard(plugin, "saveMessages", () =>
        plugin.saveMessages(sessionId, messages, { state, ...run.branch, ...reported }),
      );
    }

    await saveStates();
    this.#cursors.remember(sessionId, run.cursor, run.continues);
  }
}

/** The usage a model call reports (`LanguageModelV3Usage` and V4's: the same shape). */
export interface ModelUsage {
  inputTokens?:
    | {
        total?: number | undefined;
        cacheRead?: number | undefined;
        cacheWrite?: number | undefined;
      }
    | undefined;
  outputTokens?: { total?: number | undefined } | undefined;
}

/** The prompt-cache figures of a call's usage, each only when the provider reported a count. */
export function cacheTokens(usage: ModelUsage | undefined): {
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
} {
  const count = (value: unknown) =>
    typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
  const read = count(usage?.inputTokens?.cacheRead);
  const write = count(usage?.inputTokens?.cacheWrite);
  return {
    ...(read === undefined ? {} : { cacheReadTokens: read }),
    ...(write === undefined ? {} : { cacheWriteTokens: write }),
  };
}

function loadsHistory(plugin: ContextPlugin): plugin is HistoryPlugin {
  return isHistoryPlugin(plugin) && historyFlags(plugin).loadMessages;
}

/** The session of a call, and its provider options without the pipeline's own key. */
function sessionOf(
  params: ModelCallOptions,
  fallback: string,
): {
  sessionId: string;
  parentId: string | null | undefined;
  providerOptions: ModelCallOptions["providerOptions"];
} {
  const options = params.providerOptions;
  const own = options?.[PROVIDER_OPTIONS_KEY];
  if (own === undefined || options === undefined) {
    return { sessionId: fallback, parentId: undefined, providerOptions: options };
  }
  const { [PROVIDER_OPTIONS_KEY]: _, ...rest } = options;
  const sessionId = own.sessionId;
  if (sessionId !== undefined && (typeof sessionId !== "string" || sessionId.length === 0)) {
    throw invalidUse(`providerOptions.${PROVIDER_OPTIONS_KEY}.sessionId must be a non-empty string.`);
  }
  const parentId = own.parentId;
  if (
    parentId !== undefined &&
    parentId !== null &&
    (typeof parentId !== "string" || parentId.length === 0)
  ) {
    throw invalidUse(
      `providerOptions.${PROVIDER_OPTIONS_KEY}.parentId must be a message id (a non-empty string) or null.`,
    );
  }
  return { sessionId: sessionId ?? fallback, parentId, providerOptions: rest };
}

/**
 * The states as JSON, without empty ones: an empty state and no state are the same. A state JSON cannot hold
 * (a BigInt, a cycle) fails the call naming its plugin, before anything is stored.
 */
function statesJson(states: RunStates): string {
  const kept = Object.entries(states).filter(([, state]) => Object.keys(state).length > 0);
  try {
    return JSON.stringify(Object.fromEntries(kept));
  } catch (whole) {
    // Only on failure is each state written alone, to name the plugin whose state it is.
    for (const [sourceId, state] of kept) {
      try {
        JSON.stringify(state);
      } catch (error) {
        throw new ContextError(
          "PLUGIN_FAILED",
          `Plugin "${sourceId}"'s state cannot be saved as JSON: ${errorMessage(error)}; nothing was stored`,
          { cause: error },
        );
      }
    }
    throw whole;
  }
}

function declaredOffers(plugin: ContextPlugin): ToolOffer[] {
  const problem = plugin.tools === undefined ? null : toolSetProblem(plugin.tools);
  if (problem !== null) throw new ContextError("INVALID_CONFIG", `Plugin "${plugin.sourceId}": ${problem}.`);
  return Object.entries(plugin.tools ?? {}).map(([name, tool]) => ({
    sourceId: plugin.sourceId,
    name,
    tool,
  }));
}
