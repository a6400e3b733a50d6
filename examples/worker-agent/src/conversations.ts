import { type SessionInfo, SessionManager } from "@contextblocks/sessions";
import {
  type CompactResult,
  createCompactFunction,
  estimateMessageTokens,
} from "@contextblocks/sessions/compaction";
import { sqliteBackend } from "@contextblocks/sqlite";

/**
 * Compaction settings. The threshold is low on purpose, so that `pnpm demo` compacts after a dozen turns;
 * raise `COMPACT_AFTER_TOKENS` for real use.
 */
export const DEFAULT_COMPACT_AFTER_TOKENS = 4_000;
/** The first turn (the user's message and the answer) is never summarised. */
export const PROTECT_HEAD = 2;
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
  /** The model call that writes a summary (the agent's own model). */
  summarize: (prompt: string) => Promise<string>;
  /** Tokens of the frozen system prompt: counted with the messages against the threshold. */
  promptTokens: () => Promise<number>;
  /** Compact after an append once the history sent to the model (prompt included) passes this. */
  compactAfter: number;
}

/** What the compactions during one turn's appends did. */
export interface CompactionOutcome {
  result: CompactResult | null;
  error: string | null;
}

/**
 * The agent's conversations: a `SessionManager` on the Durable Object's storage (`assistant_sessions`,
 * `assistant_messages`, `assistant_compactions`, `assistant_fts`), each conversation a session whose
 * messages form a tree. Every session compacts itself with `createCompactFunction` once its history passes
 * the threshold; this class remembers what happened so the turn can report it.
 */
export class Conversations {
  readonly manager: SessionManager;
  #compacted: CompactResult | null = null;
  #failure: string | null = null;

  constructor(storage: DurableObjectStorage, options: ConversationOptions) {
    const compact = createCompactFunction({
      summarize: options.summarize,
      protectHead: PROTECT_HEAD,
      tailTokenBudget: TAIL_TOKEN_BUDGET,
      minTailMessages: MIN_TAIL_MESSAGES,
      // Per message, without the prompt: the session's counter below adds the prompt once.
      tokenCounter: (messages) => estimateMessageTokens(messages),
    });
    this.manager = new SessionManager(sqliteBackend(storage))
      .onCompaction(async (messages, context) => {
        const result = await compact(messages, context);
        if (result !== null) this.#compacted = result;
        return result;
      })
      .compactAfter(options.compactAfter, {
        tokenCounter: async ({ messages }) =>
          estimateMessageTokens(messages) + (await options.promptTokens()),
      })
      .onCompactionError((error) => {
        // The append stands; the turn reports the failure instead of hiding it.
        this.#failure = error instanceof Error ? error.message : String(error);
      });
  }

  /** The compaction (or failure) since the last call, and forgets it. */
  takeCompaction(): CompactionOutcome {
    const outcome = { result: this.#compacted, error: this.#failure };
    this.#compacted = null;
    this.#failure = null;
    return outcome;
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
