import { ContextError } from "@contextblocks/core";
import type { ToolSet } from "ai";
import { type HistoryProvider, historyFlags, isHistoryProvider } from "./history-provider.js";
import type { ModelCallOptions, ModelContent, RunMessage } from "./model-types.js";
import { checkOfferedTools, mergeOfferedTools, type ToolOffer } from "./offered-tools.js";
import { guard, invalidUse } from "./provider-guard.js";
import { afterView, RunAssembly, type RunBasics } from "./run-assembly.js";
import { type Cursor, continuedCount, RecentCursors } from "./run-cursor.js";
import { responseMessages, toRunMessage } from "./run-messages.js";
import type { RunContextProvider } from "./run-provider.js";
import type { RunStateStore, RunStates } from "./run-state.js";

/** The provider-options key a call may use to name its session: `{ contextblocks: { sessionId } }`. */
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
}

/**
 * The run pipeline behind `contextMiddleware`: loads state and history, runs every provider's `beforeRun`,
 * assembles the call; after the model answered, runs every `afterRun` (in reverse order), then stores
 * history and state.
 */
export class RunPipeline {
  private readonly cursors = new RecentCursors();

  constructor(
    readonly providers: readonly RunContextProvider[],
    private readonly stateStore: RunStateStore,
    private readonly defaultSessionId: string,
  ) {
    const seen = new Set<string>();
    let loader: string | undefined;
    for (const provider of providers) {
      if (typeof provider.sourceId !== "string" || provider.sourceId.length === 0) {
        throw new ContextError("INVALID_CONFIG", "Every run provider needs a non-empty string sourceId.");
      }
      if (seen.has(provider.sourceId)) {
        throw new ContextError(
          "INVALID_CONFIG",
          `Two run providers have the sourceId "${provider.sourceId}": it keys their state, so it must be unique.`,
        );
      }
      seen.add(provider.sourceId);
      if (loadsHistory(provider)) {
        if (loader !== undefined) {
          throw new ContextError(
            "INVALID_CONFIG",
            `Two history providers load messages ("${loader}" and "${provider.sourceId}"): only one may, or the model would see the conversation twice. Give the other loadMessages: false.`,
          );
        }
        loader = provider.sourceId;
      }
    }
    this.tools();
  }

  /** Every tool the providers declare, merged (a name clash is an error). */
  tools(): ToolSet {
    return mergeOfferedTools(this.providers.flatMap((provider) => declaredOffers(provider)));
  }

  async begin(params: ModelCallOptions): Promise<PreparedRun> {
    const { sessionId, providerOptions } = sessionOf(params, this.defaultSessionId);
    const leading = params.prompt.findIndex((message) => message.role !== "system");
    const split = leading === -1 ? params.prompt.length : leading;
    const callerSystem = params.prompt.slice(0, split);
    const callerMessages = params.prompt.slice(split);
    const callerJson = callerMessages.map((message) => JSON.stringify(message));

    // A step of the SDK's tool loop: only its new messages are input, and the history is the first step's.
    const previous = this.cursors.get(sessionId);
    const continued = continuedCount(previous, callerJson, callerMessages);
    const basics: RunBasics = {
      sessionId,
      inputMessages: callerMessages.slice(continued ?? 0),
    };
    const loaded = continued !== null && previous ? previous.loaded : new Map<string, RunMessage[]>();

    const savedStates = (await this.stateStore.load(sessionId)) ?? {};
    // A copy of everything stored, so the state of a provider not configured today is kept, not dropped.
    const states: RunStates = structuredClone(savedStates);
    for (const provider of this.providers) states[provider.sourceId] ??= {};

    const assembly = new RunAssembly();
    for (const provider of this.providers) {
      const state = states[provider.sourceId]!;
      if (loadsHistory(provider)) {
        let history = loaded.get(provider.sourceId);
        if (history === undefined) {
          const stored = await guard(provider, "getMessages", () =>
            provider.getMessages(sessionId, { state }),
          );
          history = stored.map(toRunMessage);
          loaded.set(provider.sourceId, history);
        }
        if (history.length > 0) assembly.addMessages(provider.sourceId, history);
      }
      assembly.offerTools(provider.sourceId, provider.tools ?? {});
      if (provider.beforeRun) {
        const view = assembly.beforeView(provider, basics, state);
        await guard(provider, "beforeRun", () => provider.beforeRun!(view));
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
    };
  }

  /**
   * After the model answered: every `afterRun`, then history, then state. A provider that throws stops it
   * before anything is written; only a failing `saveMessages` can leave earlier history providers written.
   */
  async finish(run: PreparedRun, content: readonly ModelContent[]): Promise<void> {
    const { sessionId, inputMessages } = run.basics;
    const response = responseMessages(content);
    // In reverse order, as seed 003's framework does: the first provider opens the run and closes it.
    for (const provider of [...this.providers].reverse()) {
      if (!provider.afterRun) continue;
      const view = afterView(run.basics, run.contextMessages, response, run.states[provider.sourceId]!);
      await guard(provider, "afterRun", () => provider.afterRun!(view));
    }

    const addedByProviders = [...run.contextMessages]
      .filter(([sourceId]) => !this.providers.some((p) => p.sourceId === sourceId && loadsHistory(p)))
      .flatMap(([, messages]) => messages);
    for (const provider of this.providers) {
      if (!isHistoryProvider(provider)) continue;
      const flags = historyFlags(provider);
      const messages = [
        ...(flags.storeContextMessages ? addedByProviders : []),
        ...(flags.storeInputs ? inputMessages : []),
        ...(flags.storeOutputs ? response : []),
      ];
      if (messages.length === 0) continue;
      const state = run.states[provider.sourceId]!;
      await guard(provider, "saveMessages", () => provider.saveMessages(sessionId, messages, { state }));
    }

    // One write per run, and none when no provider changed its state (a Durable Object bills each row).
    const json = statesJson(run.states);
    if (json !== run.savedStatesJson) await this.stateStore.save(sessionId, JSON.parse(json) as RunStates);
    this.cursors.remember(sessionId, run.cursor);
  }
}

function loadsHistory(provider: RunContextProvider): provider is HistoryProvider {
  return isHistoryProvider(provider) && historyFlags(provider).loadMessages;
}

/** The session of a call, and its provider options without the pipeline's own key. */
function sessionOf(
  params: ModelCallOptions,
  fallback: string,
): { sessionId: string; providerOptions: ModelCallOptions["providerOptions"] } {
  const options = params.providerOptions;
  const own = options?.[PROVIDER_OPTIONS_KEY];
  if (own === undefined || options === undefined) return { sessionId: fallback, providerOptions: options };
  const { [PROVIDER_OPTIONS_KEY]: _, ...rest } = options;
  const sessionId = own.sessionId;
  if (sessionId !== undefined && (typeof sessionId !== "string" || sessionId.length === 0)) {
    throw invalidUse(`providerOptions.${PROVIDER_OPTIONS_KEY}.sessionId must be a non-empty string.`);
  }
  return { sessionId: sessionId ?? fallback, providerOptions: rest };
}

/** The states as JSON, without empty ones: an empty state and no state are the same. */
function statesJson(states: RunStates): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(states).filter(([, state]) => Object.keys(state).length > 0)),
  );
}

function declaredOffers(provider: RunContextProvider): ToolOffer[] {
  return Object.entries(provider.tools ?? {}).map(([name, tool]) => ({
    sourceId: provider.sourceId,
    name,
    tool,
  }));
}
