import { ContextError, SYSTEM_PROMPT_LABEL, type WritableContextProvider } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import {
  type AnyContextProvider,
  describeValue,
  namespacePrefix,
  rowLabel,
} from "@contextblocks/core/store-kit";
import { MessageTree } from "../message-tree.js";
import type { SessionBackend } from "../session-backend.js";
import type { SearchResult } from "../session-store.js";
import { InMemoryRunStateStore } from "./run-state-store.js";
import { InMemorySessionRegistry } from "./session-registry.js";
import { InMemorySessionStore, InMemorySessions } from "./session-store.js";

/** Options of `inMemoryBackend`: pass the parts to share them (a restart is a new backend on the same parts). */
export interface InMemoryBackendOptions {
  /** Messages and overlays. */
  sessions?: InMemorySessions;
  /** Blocks declared without a provider, and frozen prompts. */
  blocks?: InMemoryStore;
  runState?: InMemoryRunStateStore;
  registry?: InMemorySessionRegistry;
}

/** A `SessionBackend` with everything in memory: `InMemory*` stores, blocks on core's `InMemoryStore`. */
export interface InMemoryBackend extends SessionBackend {
  readonly sessions: InMemorySessions;
  readonly blocks: InMemoryStore;
  readonly runState: InMemoryRunStateStore;
  readonly registry: InMemorySessionRegistry;
}

/**
 * Every session store in memory, for tests, examples and quick starts:
 * `new SessionBuilder(inMemoryBackend()).forSession("chat").build()`. Blocks of a session are kept apart by key (the
 * default session `""` uses the plain label, as the SQL backends do).
 */
export function inMemoryBackend(options: InMemoryBackendOptions = {}): InMemoryBackend {
  const sessions = options.sessions ?? new InMemorySessions();
  const blocks = options.blocks ?? new InMemoryStore();
  const runState = options.runState ?? new InMemoryRunStateStore();
  const registry = options.registry ?? new InMemorySessionRegistry();
  const provider = (label: string, sessionId: string) =>
    new InMemoryContextProvider({ store: blocks, label: blockKey(label, sessionId) });
  return {
    name: "memory",
    sessions,
    blocks,
    runState,
    registry,
    messages: (sessionId: string) => new MessageTree(new InMemorySessionStore({ sessionId, sessions })),
    block: (label: string, sessionId: string): AnyContextProvider => provider(label, sessionId),
    prompt: (sessionId: string): WritableContextProvider => provider(SYSTEM_PROMPT_LABEL, sessionId),
    searchMessages: async (query: string, limit: number): Promise<SearchResult[]> =>
      sessions.search(query, limit),
    searchMessagesSync: (query: string, limit: number): SearchResult[] => sessions.search(query, limit),
    async deleteSession(sessionId: string): Promise<void> {
      // Checked before anything is deleted: a refusal halfway would leave half a session.
      if (typeof sessionId !== "string") {
        throw new ContextError(
          "INVALID_INPUT",
          `deleteSession: the session id must be a string, got ${describeValue(sessionId)}`,
        );
      }
      sessions.clear(sessionId);
      const prefix = blockKeyPrefix(sessionId);
      for (const key of [...blocks.blocks.keys()]) {
        if (prefix === null ? false : key.startsWith(prefix)) blocks.blocks.delete(key);
      }
      if (prefix === null) blocks.blocks.delete(SYSTEM_PROMPT_LABEL);
      // The default session ("") has no run state: run-state stores refuse an empty session id.
      if (sessionId !== "") await runState.delete(sessionId);
      await registry.delete(sessionId);
    },
  };
}

/** The key a session's block is kept under: its row label, as the SQL backends store it. */
function blockKey(label: string, sessionId: string): string {
  return rowLabel(label, sessionId === "" ? undefined : sessionId);
}

/** Every key of one session's blocks starts with this; `null` for the default session (plain labels). */
function blockKeyPrefix(sessionId: string): string | null {
  return sessionId === "" ? null : namespacePrefix(sessionId);
}
