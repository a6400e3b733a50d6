import { ContextError, SYSTEM_PROMPT_LABEL, type WritableContextProvider } from "@contextblocks/core";
import { type AnyContextProvider, describeValue } from "@contextblocks/core/store-kit";
import type { SessionBackend } from "@contextblocks/sessions";
import { InMemoryRunStateStore, inMemoryBackend } from "@contextblocks/sessions/memory";
import {
  isSessionBackend,
  isSessionStoreV1,
  MessageTree,
  type SessionStore,
  type SessionStoreV1,
} from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlSource, sql } from "@contextblocks/sql";
import { isMissingTableError, raw } from "@contextblocks/sql/store-kit";
import { SqliteContextProvider, sqliteBackend } from "@contextblocks/sqlite";

/**
 * The key a block declared without a provider is stored under, as Cloudflare agents' Sessions API
 * (agents@0.22.0, `agents/experimental/memory/session`) spells it: the label for the default session,
 * `<label>_<sessionId>` for a named one (`memory_chat-1`).
 */
export function agentsBlockKey(label: string, sessionId: string): string {
  return sessionId === "" ? label : `${label}_${sessionId}`;
}

/** The key of the frozen prompt, as agents spells it: `_system_prompt`, or `_system_prompt_<sessionId>`. */
export function agentsPromptKey(sessionId: string): string {
  return sessionId === "" ? SYSTEM_PROMPT_LABEL : `${SYSTEM_PROMPT_LABEL}_${sessionId}`;
}

/**
 * `sqliteBackend(source)` with the block and prompt keys of agents@0.22.0 (plain rows of
 * `cf_agents_context_blocks` named `memory_chat-1`, `_system_prompt_chat-1`) instead of contextblocks'
 * namespaced row labels, so a database agents wrote reads as it was and agents can still read what is
 * written back. Messages, overlays and search are the same tables either way; a database without them gets
 * the lean layout, which agents@0.22.0 reads and writes too (not the keyed one a Durable Object gets from
 * `sqliteBackend`), so an agent moved here can be moved back.
 */
export function agentsSqliteBackend(source: SqlSource): SessionBackend {
  const backend = sqliteBackend(source, { newDatabaseLayout: "lean" });
  // agents' keys (`memory_chat-1`) do not say which part is the label, so the rows a session owns are
  // found from the labels its sessions declared (a session resolves its blocks before it is deleted).
  const labels = new Set<string>();
  return {
    ...backend,
    name: "sqlite (agents keys)",
    block: (label, sessionId) => {
      labels.add(label);
      return new SqliteContextProvider(backend.client, agentsBlockKey(label, sessionId));
    },
    // The frozen prompt is a cache of the blocks, not memory: it keeps no versions.
    prompt: (sessionId) =>
      new SqliteContextProvider(backend.client, { label: agentsPromptKey(sessionId), versions: false }),
    deleteSession: async (sessionId) => {
      await backend.deleteSession(sessionId);
      const keys = [...labels].map((label) => agentsBlockKey(label, sessionId));
      await deleteBlockRows(backend.client, [...keys, agentsPromptKey(sessionId)]);
    },
  };
}

/** Deletes block rows and their versions by key, in one batch; a table never created is skipped. */
async function deleteBlockRows(client: SqlClient, keys: readonly string[]): Promise<void> {
  const list = JSON.stringify(keys);
  // A block's newest versions are in its own row; older ones in batches or single slots.
  const tables = [
    "contextblocks_block_history",
    "contextblocks_block_history_batches",
    "cf_agents_context_blocks",
  ];
  for (const table of tables) {
    try {
      await client.batch([
        sql`DELETE FROM ${raw(table)} WHERE label IN (SELECT value FROM json_each(${list}))`,
      ]);
    } catch (error) {
      if (!isMissingTableError(error, table)) throw error;
    }
  }
}

/**
 * A backend around a message store alone (agents' `Session.create(sessionProvider)`): as in agents, a
 * block declared without a provider has no storage (it reads empty and is read-only) and a cached prompt
 * lives in memory for the life of the session.
 */
export function storeOnlyBackend(store: SessionStore): SessionBackend {
  const memory = inMemoryBackend();
  const prompts = new Map<string, WritableContextProvider>();
  return {
    ...memory,
    name: "store",
    runState: new InMemoryRunStateStore(),
    messages: () => store,
    block: (): AnyContextProvider => ({ get: async () => null }),
    prompt: (sessionId) => {
      let prompt = prompts.get(sessionId);
      if (prompt === undefined) {
        let value: string | null = null;
        prompt = {
          get: async () => value,
          set: async (content: string) => {
            value = content;
          },
        };
        prompts.set(sessionId, prompt);
      }
      return prompt;
    },
  };
}

/**
 * What agents' `Session.create` accepts: an Agent (anything with `sql`), a `SessionProvider`, a store on the
 * storage contract (read through the message tree), or a backend.
 */
export type SessionSource = SqlSource | SessionStore | SessionStoreV1 | SessionBackend;

export function backendOf(source: SessionSource, method: string): SessionBackend {
  if (isSessionBackend(source)) return source;
  if (isSessionStoreV1(source)) return storeOnlyBackend(new MessageTree(source));
  if (isStore(source)) return storeOnlyBackend(source);
  try {
    return agentsSqliteBackend(source);
  } catch (error) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${method}: expected an Agent (this), ctx.storage, a better-sqlite3 Database, a SessionProvider or a SessionBackend, got ${describeValue(source)}`,
      { cause: error },
    );
  }
}

function isStore(value: unknown): value is SessionStore {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.getHistory === "function" &&
    typeof candidate.appendMessage === "function" &&
    typeof candidate.getLatestLeaf === "function" &&
    typeof candidate.addCompaction === "function"
  );
}
