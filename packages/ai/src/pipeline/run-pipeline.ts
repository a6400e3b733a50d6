import { ContextError } from "@contextblocks/core";
import type { ToolSet } from "ai";
import { historyFlags, isHistoryProvider } from "./history-provider.js";
import type { ModelCallOptions, ModelContent, RunMessage } from "./model-types.js";
import { checkOfferedTools, mergeOfferedTools, type ToolOffer } from "./offered-tools.js";
import { responseMessages, toRunMessage } from "./run-messages.js";
import type { MessageTransform, RunContext, RunContextProvider } from "./run-provider.js";
import type { RunStateStore, RunStates } from "./run-state.js";

/** The provider-options key a call may use to name its session: `{ contextblocks: { sessionId } }`. */
export const PROVIDER_OPTIONS_KEY = "contextblocks";

/**
 * How many sessions' last calls are remembered to recognise the next step of a tool loop. The next step
 * follows within the same `generateText` call, so only sessions with a loop in flight need it.
 */
const REMEMBERED_SESSIONS = 1_000;

/** What the pipeline remembers of a session's last successful call, to recognise the SDK's next step. */
interface Cursor {
  /** The caller's messages of that call, each as JSON. */
  callerMessages: string[];
  /** The history each loading provider gave that call, reused on a continuation. */
  loaded: Map<string, RunMessage[]>;
}

/** One call between `begin` and `finish`. */
export interface PreparedRun {
  readonly sessionId: string;
  /** The call options to send to the model. */
  readonly params: ModelCallOptions;
  readonly inputMessages: RunMessage[];
  readonly contextMessages: Map<string, RunMessage[]>;
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
  private readonly cursors = new Map<string, Cursor>();

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
      if (isHistoryProvider(provider) && historyFlags(provider).loadMessages) {
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

    const previous = this.cursors.get(sessionId);
    const continuation = previous !== undefined && continues(previous, callerJson, callerMessages);
    const inputMessages = continuation
      ? callerMessages.slice(previous.callerMessages.length + 1)
      : [...callerMessages];
    const loaded = continuation ? previous.loaded : new Map<string, RunMessage[]>();

    const savedStates = (await this.stateStore.load(sessionId)) ?? {};
    // A copy of everything stored, so the state of a provider not configured today is kept, not dropped.
    const states: RunStates = structuredClone(savedStates);
    for (const provider of this.providers) states[provider.sourceId] ??= {};

    const contextMessages = new Map<string, RunMessage[]>();
    const instructions: string[] = [];
    const offers: ToolOffer[] = [];
    const transforms: Array<{ provider: RunContextProvider; transform: MessageTransform }> = [];
    let frozen: { sourceId: string; text: string } | undefined;

    for (const provider of this.providers) {
      const state = states[provider.sourceId]!;
      if (isHistoryProvider(provider) && historyFlags(provider).loadMessages) {
        let history = loaded.get(provider.sourceId);
        if (history === undefined) {
          const stored = await guard(provider, "getMessages", () =>
            provider.getMessages(sessionId, { state }),
          );
          history = stored.map(toRunMessage);
          loaded.set(provider.sourceId, history);
        }
        if (history.length > 0) contextMessages.set(provider.sourceId, [...history]);
      }
      offers.push(...declaredOffers(provider));
      if (!provider.beforeRun) continue;
      const view: RunContext = {
        sessionId,
        inputMessages,
        contextMessages,
        responseMessages: [],
        state,
        extendInstructions(sourceId, text) {
          checkSource(sourceId, "extendInstructions");
          if (typeof text !== "string") throw invalid(`extendInstructions("${sourceId}") needs text.`);
          if (text.length > 0) instructions.push(text);
        },
        extendMessages(sourceId, messages) {
          checkSource(sourceId, "extendMessages");
          if (!Array.isArray(messages)) throw invalid(`extendMessages("${sourceId}") needs an array.`);
          const list = contextMessages.get(sourceId) ?? [];
          list.push(...messages.map(toRunMessage));
          contextMessages.set(sourceId, list);
        },
        extendTools(sourceId, tools) {
          checkSource(sourceId, "extendTools");
          for (const [name, tool] of Object.entries(tools)) offers.push({ sourceId, name, tool });
        },
        setFrozenPrompt(sourceId, text) {
          checkSource(sourceId, "setFrozenPrompt");
          if (typeof text !== "string") throw invalid(`setFrozenPrompt("${sourceId}") needs text.`);
          if (frozen !== undefined && frozen.sourceId !== sourceId) {
            throw invalid(
              `Two providers set the frozen prompt ("${frozen.sourceId}" and "${sourceId}"): a call has one cached prefix.`,
            );
          }
          frozen = { sourceId, text };
        },
        transformMessages(sourceId, transform) {
          checkSource(sourceId, "transformMessages");
          if (typeof transform !== "function")
            throw invalid(`transformMessages("${sourceId}") needs a function.`);
          transforms.push({ provider, transform });
        },
      };
      await guard(provider, "beforeRun", () => provider.beforeRun!(view));
    }

    await checkOfferedTools(offers, params.tools);

    let conversation: RunMessage[] = [...[...contextMessages.values()].flat(), ...callerMessages];
    for (const { provider, transform } of transforms) {
      const input = conversation;
      conversation = await guard(provider, "transformMessages", () => transform(input));
    }
    const system: RunMessage[] = [
      ...(frozen !== undefined && frozen.text.length > 0
        ? [{ role: "system" as const, content: frozen.text }]
        : []),
      ...callerSystem,
      ...instructions.map((text) => ({ role: "system" as const, content: text })),
    ];
    const prompt = [...system, ...conversation];
    return {
      sessionId,
      params: { ...params, prompt, ...(providerOptions ? { providerOptions } : {}) } as ModelCallOptions,
      inputMessages,
      contextMessages,
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
    const response = responseMessages(content);
    const frozenContext = new Map(run.contextMessages);
    // In reverse order, as seed 003's framework does: the first provider opens the run and closes it.
    for (const provider of [...this.providers].reverse()) {
      if (!provider.afterRun) continue;
      const view: RunContext = {
        sessionId: run.sessionId,
        inputMessages: run.inputMessages,
        contextMessages: frozenContext,
        responseMessages: response,
        state: run.states[provider.sourceId]!,
        extendInstructions: () => afterOnly("extendInstructions"),
        extendMessages: () => afterOnly("extendMessages"),
        extendTools: () => afterOnly("extendTools"),
        setFrozenPrompt: () => afterOnly("setFrozenPrompt"),
        transformMessages: () => afterOnly("transformMessages"),
      };
      await guard(provider, "afterRun", () => provider.afterRun!(view));
    }

    const addedByProviders = [...run.contextMessages]
      .filter(([sourceId]) => !this.isLoadingHistory(sourceId))
      .flatMap(([, messages]) => messages);
    for (const provider of this.providers) {
      if (!isHistoryProvider(provider)) continue;
      const flags = historyFlags(provider);
      const messages = [
        ...(flags.storeContextMessages ? addedByProviders : []),
        ...(flags.storeInputs ? run.inputMessages : []),
        ...(flags.storeOutputs ? response : []),
      ];
      if (messages.length === 0) continue;
      const state = run.states[provider.sourceId]!;
      await guard(provider, "saveMessages", () => provider.saveMessages(run.sessionId, messages, { state }));
    }

    // One write per run, and none when no provider changed its state (a Durable Object bills each row).
    const json = statesJson(run.states);
    if (json !== run.savedStatesJson)
      await this.stateStore.save(run.sessionId, JSON.parse(json) as RunStates);
    this.remember(run.sessionId, run.cursor);
  }

  /** Keeps the cursor of the most recent sessions only, so a server with many sessions stays bounded. */
  private remember(sessionId: string, cursor: Cursor): void {
    this.cursors.delete(sessionId);
    this.cursors.set(sessionId, cursor);
    if (this.cursors.size > REMEMBERED_SESSIONS) {
      const oldest = this.cursors.keys().next().value;
      if (oldest !== undefined) this.cursors.delete(oldest);
    }
  }

  private isLoadingHistory(sourceId: string): boolean {
    const provider = this.providers.find((candidate) => candidate.sourceId === sourceId);
    return provider !== undefined && isHistoryProvider(provider) && historyFlags(provider).loadMessages;
  }
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
    throw invalid(`providerOptions.${PROVIDER_OPTIONS_KEY}.sessionId must be a non-empty string.`);
  }
  return { sessionId: sessionId ?? fallback, providerOptions: rest };
}

/**
 * True when the call continues the session's last one: it starts with that call's messages, then the
 * assistant message the SDK made of its response (already stored), as each step of a tool loop does.
 */
function continues(previous: Cursor, callerJson: readonly string[], callerMessages: readonly RunMessage[]) {
  const count = previous.callerMessages.length;
  if (callerJson.length <= count || callerMessages[count]?.role !== "assistant") return false;
  for (let index = 0; index < count; index++) {
    if (callerJson[index] !== previous.callerMessages[index]) return false;
  }
  return true;
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

function checkSource(sourceId: unknown, method: string): void {
  if (typeof sourceId !== "string" || sourceId.length === 0) {
    throw invalid(`${method} needs the provider's sourceId (a non-empty string) as its first argument.`);
  }
}

function invalid(message: string): ContextError {
  return new ContextError("INVALID_INPUT", message);
}

function afterOnly(method: string): never {
  throw invalid(`${method} only works in beforeRun: the model call is over.`);
}

/** Runs a provider's code; a throw becomes a `PROVIDER_FAILED` error naming the provider and the step. */
async function guard<T>(
  provider: RunContextProvider,
  step: string,
  action: () => T | Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ContextError(
      "PROVIDER_FAILED",
      `Run provider "${provider.sourceId}" failed in ${step}: ${reason}`,
      {
        cause: error,
      },
    );
  }
}
