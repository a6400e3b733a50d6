import type { RunState } from "@contextblocks/sessions/store-kit";
import type { ModelMessage } from "ai";
import type { RunMessage } from "./model-types.js";
import type { ContextPlugin } from "./plugin.js";

/** What a history plugin loads and stores (the flags of Microsoft Agent Framework's history providers; defaults as there). */
export interface HistoryPluginOptions {
  /** Put the stored messages before the caller's on every call. Default `true`; one plugin at most. */
  loadMessages?: boolean;
  /** Store the caller's new messages. Default `true`. */
  storeInputs?: boolean;
  /** Store the model's response. Default `true`. */
  storeOutputs?: boolean;
  /**
   * Also store the messages other (non-history) plugins added to the call, before the input: for an
   * audit log of what the model saw. Default `false`. History loaded by a history plugin is not stored
   * again, and neither are reminders or instructions.
   */
  storeContextMessages?: boolean;
}

/** What `getMessages` and `saveMessages` get besides the session: the plugin's own state, to read or change. */
export interface HistoryCall {
  state: RunState;
  /**
   * The message the call's new messages continue, when the call names one
   * (`providerOptions: { contextblocks: { parentId } }`, on the first model call of a turn only): load the
   * branch that ends there (`null`: none, a new root) and store the new messages under it. Absent: the
   * latest leaf, the conversation as it goes on.
   */
  parentId?: string | null;
  /**
   * On `saveMessages`: what the model provider reported for the call (`usage.inputTokens`, and of them the
   * tokens read from and written to its prompt cache where it says), and how many of the messages to save, from
   * the first, the call sent (the rest are its response). Absent when the model provider reported no input tokens.
   */
  usage?: {
    inputTokens: number;
    sentMessages: number;
    cacheReadTokens?: number | undefined;
    cacheWriteTokens?: number | undefined;
  };
}

/**
 * A plugin that loads and stores the conversation (Microsoft Agent Framework's history provider): `getMessages` gives the
 * session's stored messages, oldest first; `saveMessages` appends the messages of one successful call.
 * Pipelines recognise it by those two methods; it may have `beforeCall` / `afterCall` too.
 */
export interface HistoryPlugin extends ContextPlugin, HistoryPluginOptions {
  /** `ModelMessage`s with string content are accepted and read as one text part. */
  getMessages(sessionId: string, call: HistoryCall): Promise<readonly (RunMessage | ModelMessage)[]>;
  saveMessages(sessionId: string, messages: readonly RunMessage[], call: HistoryCall): Promise<void>;
}

/** True when the plugin has `getMessages` and `saveMessages`. */
export function isHistoryPlugin(plugin: ContextPlugin): plugin is HistoryPlugin {
  const candidate = plugin as Partial<HistoryPlugin>;
  return typeof candidate.getMessages === "function" && typeof candidate.saveMessages === "function";
}

/** The flags with their defaults filled in. */
export function historyFlags(plugin: HistoryPlugin): Required<HistoryPluginOptions> {
  return {
    loadMessages: plugin.loadMessages ?? true,
    storeInputs: plugin.storeInputs ?? true,
    storeOutputs: plugin.storeOutputs ?? true,
    storeContextMessages: plugin.storeContextMessages ?? false,
  };
}

/** Options of `InMemoryHistoryPlugin`. */
export interface InMemoryHistoryOptions extends HistoryPluginOptions {
  /** Where the messages live, by session id. Share one map between plugins to model a restart. */
  sessions?: Map<string, RunMessage[]>;
}

/**
 * Microsoft Agent Framework's `InMemoryHistoryPlugin`: the conversation per session in a `Map`, for local memory, tests,
 * or (with `loadMessages: false, storeContextMessages: true`) an audit of what the model saw. Messages are
 * copied in and out (`structuredClone`), so nobody changes them behind its back.
 */
export class InMemoryHistoryPlugin implements HistoryPlugin {
  readonly loadMessages: boolean;
  readonly storeInputs: boolean;
  readonly storeOutputs: boolean;
  readonly storeContextMessages: boolean;
  readonly #sessions: Map<string, RunMessage[]>;

  constructor(
    readonly sourceId: string,
    options: InMemoryHistoryOptions = {},
  ) {
    this.loadMessages = options.loadMessages ?? true;
    this.storeInputs = options.storeInputs ?? true;
    this.storeOutputs = options.storeOutputs ?? true;
    this.storeContextMessages = options.storeContextMessages ?? false;
    this.#sessions = options.sessions ?? new Map();
  }

  async getMessages(sessionId: string): Promise<RunMessage[]> {
    return this.messages(sessionId);
  }

  async saveMessages(sessionId: string, messages: readonly RunMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const stored = this.#sessions.get(sessionId) ?? [];
    stored.push(...structuredClone(messages));
    this.#sessions.set(sessionId, stored);
  }

  /** A copy of the session's stored messages, oldest first. */
  messages(sessionId: string): RunMessage[] {
    return structuredClone(this.#sessions.get(sessionId) ?? []);
  }
}
