import { type ContextPipeline, contextPipeline } from "@contextblocks/ai";
import type { ContextBlocks } from "@contextblocks/core";
import {
  type CompactedEvent,
  estimateMessageTokens,
  Session,
  type SessionInfo,
  SessionManager,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { type SqliteBackend, sqliteBackend } from "@contextblocks/sqlite";
import type { AgentModel } from "./model.js";

/**
 * Compaction settings. The threshold is low on purpose, so that `pnpm demo` compacts after a dozen turns;
 * raise `COMPACT_AFTER_TOKENS` for real use.
 */
export const DEFAULT_COMPACT_AFTER_TOKENS = 4_000;
/**
 * The first turn is never summarised: the user's message, the model call that used a tool, and the
 * answer (the pipeline stores each model call as a message).
 */
export const PROTECT_HEAD = 3;
/** The newest messages kept as they are, up to this many tokens (at least the last turn). */
export const TAIL_TOKEN_BUDGET = 800;
export const MIN_TAIL_MESSAGES = 2;

/** The name of the conversation an agent starts with. */
export const FIRST_SESSION_NAME = "Conversation 1";

/** `COMPACT_AFTER_TOKENS` checked: the default when empty or unset, a whole number ≥ 1,000, else an error. */
export function compactAfterFrom(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_COMPACT_AFTER_TOKENS;
  const tokens = Number(value.trim());
  if (!Number.isInteger(tokens) || tokens < 1_000) {
    throw new Error(`COMPACT_AFTER_TOKENS must be a whole number of at least 1000, got "${value}"`);
  }
  return tokens;
}

export interface ConversationOptions {
  /** The agent's blocks: every conversation shares them (one memory per agent). */
  context: ContextBlocks;
  /** The model every turn goes to (wrapped by each conversation's pipeline). */
  model: AgentModel;
  /** The model call that writes a summary (the agent's own model). */
  summarize: (prompt: string) => Promise<string>;
  /** Compact after a turn once the history sent to the model (prompt included) passes this. */
  compactAfter: number;
  /** Hears each conversation's compactions (the inspector's live events). */
  onCompacted?: (event: CompactedEvent) => void;
}

/** A conversation: its `Session` and the pipeline every turn of it goes through. */
export interface Conversation {
  readonly session: Session;
  readonly pipeline: ContextPipeline;
  /** An automatic compaction that failed since the last `takeCompactionError()` (the turn stands). */
  takeCompactionError(): string | null;
}

/**
 * The agent's conversations, all in the Durable Object's SQLite database through one `sqliteBackend`:
 * a `SessionManager` for the registry (`assistant_sessions`: names, usage, most recently written first),
 * and per conversation a `Session` given its collaborators: the messages (`backend.messages(id)`, a tree in
 * `assistant_messages`), the agent's shared `ContextBlocks`, the run-state store, and the compaction
 * (`createCompactFunction`, once a turn passes the threshold). Each conversation's turns go through
 * `contextPipeline({ model, session })`: the session supplies prompt, history, storage and compaction.
 */
export class Conversations {
  readonly backend: SqliteBackend;
  readonly manager: SessionManager;
  readonly #options: ConversationOptions;
  readonly #open = new Map<string, Conversation>();

  constructor(storage: DurableObjectStorage, options: ConversationOptions) {
    this.backend = sqliteBackend(storage);
    this.manager = new SessionManager(this.backend);
    this.#options = options;
  }

  /** The conversation with this id: its session and pipeline, built on first use (nothing is read). */
  open(sessionId: string): Conversation {
    const known = this.#open.get(sessionId);
    if (known !== undefined) return known;
    const { context, model, summarize, compactAfter } = this.#options;
    let failure: string | null = null;
    const session = new Session({
      store: this.backend.messages(sessionId),
      context,
      runState: this.backend.runState,
      compaction: createCompactFunction({
        summarize,
        protectHead: PROTECT_HEAD,
        tailTokenBudget: TAIL_TOKEN_BUDGET,
        minTailMessages: MIN_TAIL_MESSAGES,
        // Per message, without the prompt: the session's counter below adds the prompt once.
        tokenCounter: (messages) => estimateMessageTokens(messages),
      }),
      threshold: compactAfter,
      tokenCounter: ({ messages, systemPrompt }) =>
        estimateMessageTokens(messages) + context.estimateTokens(systemPrompt),
      onCompactionError: (error) => {
        // The turn is stored all the same; it reports the failure instead of hiding it.
        failure = error instanceof Error ? error.message : String(error);
      },
    });
    const onCompacted = this.#options.onCompacted;
    if (onCompacted !== undefined) {
      // Only compactions: the blocks' events come from the shared context, heard once by the agent.
      session.subscribe((event) => {
        if (event.type === "compacted") onCompacted(event);
      });
    }
    const conversation: Conversation = {
      session,
      pipeline: contextPipeline({ model, session }),
      takeCompactionError() {
        const taken = failure;
        failure = null;
        return taken;
      },
    };
    this.#open.set(sessionId, conversation);
    return conversation;
  }

  /** The conversation turns go to by default: the one most recently written to. */
  async current(): Promise<SessionInfo | null> {
    return (await this.manager.list())[0] ?? null;
  }

  /** The current conversation, created on the first turn. */
  async currentOrFirst(): Promise<SessionInfo> {
    return (await this.current()) ?? this.manager.create(FIRST_SESSION_NAME, { source: "worker-agent" });
  }
}
