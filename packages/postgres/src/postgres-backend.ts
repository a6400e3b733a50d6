import { ContextError, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { describeValue, namespacePrefix } from "@contextblocks/core/store-kit";
import type { SearchResult, SessionBackend } from "@contextblocks/sessions";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, type StatementObserver, sql } from "@contextblocks/sql";
import {
  BLOCKS_TABLE,
  HISTORY_TABLE,
  REGISTRY_TABLE,
  RUN_STATE_TABLE,
  SKILLS_TABLE,
  TableAccess,
  unstorable,
} from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";
import { searchAllSessions } from "./message-search.js";
import { PostgresContextProvider } from "./postgres-context-provider.js";
import { PostgresRunStateStore } from "./postgres-run-state-store.js";
import { PostgresSessionRegistry } from "./postgres-session-registry.js";
import { PostgresSessionStore } from "./postgres-session-store.js";
import { SEARCH_TABLE, SESSION_TABLES } from "./schema.js";
import { sessionTablesReady } from "./session-tables-ready.js";

/** Options of `postgresBackend`. */
export interface PostgresBackendOptions {
  /** Create each table on its first write when it is missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * Every store sessions need, in one Postgres database (`SessionBackend`): on a node-postgres `Client` or
 * `Pool`, a `postgres` (porsager) instance, or Hyperdrive's connection string through either. All parts
 * share the one client; each creates only its own tables, on first write.
 *
 * - `messages(id)`: the message tree of `@contextblocks/sessions` over a `PostgresSessionStore`;
 * - `block(label, id)` and `prompt(id)`: `PostgresContextProvider` rows in the session's namespace (the
 *   session id), so `deleteSession` finds them;
 * - `runState`: a `PostgresRunStateStore`; `registry`: a `PostgresSessionRegistry`;
 * - `searchMessages`: full-text search over every session's messages;
 * - `deleteSession(id)`: one transaction that removes the session's messages, overlays and their search
 *   data, its leaf pointer, the block, skill and search rows of its namespace (the frozen prompt among them),
 *   its run state and its registry row.
 *
 * ```ts
 * const backend = postgresBackend(pool);
 * const info = await backend.registry.create(crypto.randomUUID(), "Support chat");
 * await backend.messages(info.id).appendMessage(message);
 * ```
 */
export function postgresBackend(
  source: PostgresSource,
  options: PostgresBackendOptions = {},
): SessionBackend {
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `postgresBackend: options must be an object, got ${describeValue(options)}`,
    );
  }
  const { createTables = true } = options;
  if (typeof createTables !== "boolean") {
    throw new ContextError(
      "INVALID_CONFIG",
      `postgresBackend: createTables must be a boolean, got ${describeValue(createTables)}`,
    );
  }
  const client = postgresClient(source, options.onStatement, "postgresBackend");
  const messages = new TableAccess(client, SESSION_TABLES, createTables, "postgresBackend");
  const namespaceOf = (sessionId: string): string | undefined => (sessionId === "" ? undefined : sessionId);

  return {
    name: "postgres",
    messages: (sessionId) => new MessageTree(new PostgresSessionStore(client, { sessionId, createTables })),
    block: (label, sessionId) =>
      new PostgresContextProvider(client, { label, namespace: namespaceOf(sessionId), createTables }),
    prompt: (sessionId) =>
      new PostgresContextProvider(client, {
        label: SYSTEM_PROMPT_LABEL,
        namespace: namespaceOf(sessionId),
        createTables,
        versions: false, // the frozen prompt is not a block the model writes: no versions
      }),
    runState: new PostgresRunStateStore(client, { createTables }),
    registry: new PostgresSessionRegistry(client, { createTables }),
    async searchMessages(query: string, limit: number): Promise<SearchResult[]> {
      await sessionTablesReady(client, createTables, "postgresBackend", false);
      return searchAllSessions((statement) => messages.read(() => client.run(statement), []), query, limit);
    },
    async deleteSession(sessionId: string): Promise<void> {
      if (typeof sessionId !== "string" || sessionId.length === 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `deleteSession: the session id must be a non-empty string, got ${describeValue(sessionId)}`,
        );
      }
      // An id Postgres text cannot hold names no stored session.
      if (unstorable(sessionId, "postgres") !== null) return;
      const prefix = namespacePrefix(sessionId);
      // Only tables that exist (in the search path): a statement on a missing one would abort the transaction.
      const names = [
        BLOCKS_TABLE,
        HISTORY_TABLE,
        SEARCH_TABLE,
        SESSION_TABLES,
        SKILLS_TABLE,
        RUN_STATE_TABLE,
        REGISTRY_TABLE,
      ]
        .map((table) => table.name)
        .concat("assistant_compactions", "assistant_leaves", "assistant_token_calibration");
      const present = new Set(
        (
          await client.run<{
            name: string;
          }>(sql`SELECT name FROM unnest(${`{${names.join(",")}}`}::text[]) AS name
WHERE to_regclass(name) IS NOT NULL`)
        ).map((row) => row.name),
      );
      const statements: SqlStatement[] = [];
      const when = (table: string, statement: SqlStatement) => {
        if (present.has(table)) statements.push(statement);
      };
      // The pointer row first: an append of this session waits until the transaction ends.
      when(
        "assistant_leaves",
        sql`SELECT 1 FROM assistant_leaves WHERE session_id = ${sessionId} FOR UPDATE`,
      );
      when("assistant_messages", sql`DELETE FROM assistant_messages WHERE session_id = ${sessionId}`);
      when("assistant_compactions", sql`DELETE FROM assistant_compactions WHERE session_id = ${sessionId}`);
      when("assistant_leaves", sql`DELETE FROM assistant_leaves WHERE session_id = ${sessionId}`);
      when(
        "assistant_token_calibration",
        sql`DELETE FROM assistant_token_calibration WHERE session_id = ${sessionId}`,
      );
      when(
        "cf_agents_context_blocks",
        sql`DELETE FROM cf_agents_context_blocks WHERE starts_with(label, ${prefix})`,
      );
      when(
        "contextblocks_block_history",
        sql`DELETE FROM contextblocks_block_history WHERE starts_with(label, ${prefix})`,
      );
      when(
        "contextblocks_block_history_batches",
        sql`DELETE FROM contextblocks_block_history_batches WHERE starts_with(label, ${prefix})`,
      );
      when(
        "cf_agents_search_entries",
        sql`DELETE FROM cf_agents_search_entries WHERE starts_with(label, ${prefix})`,
      );
      when("contextblocks_skills", sql`DELETE FROM contextblocks_skills WHERE starts_with(scope, ${prefix})`);
      when(
        "contextblocks_run_state",
        sql`DELETE FROM contextblocks_run_state WHERE session_id = ${sessionId}`,
      );
      when("assistant_sessions", sql`DELETE FROM assistant_sessions WHERE id = ${sessionId}`);
      await client.batch(statements);
    },
  };
}
