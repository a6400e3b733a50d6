import { ContextError, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { namespacePrefix } from "@contextblocks/core/store-kit";
import type { SearchResult, SessionBackend } from "@contextblocks/sessions";
import {
  candidateCount,
  checkSearchLimit,
  MessageTree,
  maximumSearchLimit,
  rerankSearchCandidates,
  selectSearchHits,
} from "@contextblocks/sessions/store-kit";
import {
  type SqlClient,
  type SqlSource,
  type SqlStatement,
  type StatementObserver,
  sql,
} from "@contextblocks/sql";
import { toSqliteClient } from "@contextblocks/sql/store-kit";
import { searchOrderBump } from "./keyed-tail.js";
import { catchUpWhereWritable } from "./message-index.js";
import { checkSearchQuery, searchSortOf, searchSteps } from "./message-search.js";
import { SessionBlockProvider } from "./session-block-provider.js";
import {
  type NewSessionLayout,
  type SessionLayout,
  schemaToRead,
  schemaToReadAtOnce,
} from "./session-schema.js";
import { answersAtOnce, runSteps, runStepsAtOnce, type SqlSteps } from "./sql-steps.js";
import { SqliteContextProvider } from "./sqlite-context-provider.js";
import { SqliteRunStateStore } from "./sqlite-run-state-store.js";
import { SqliteSessionRegistry } from "./sqlite-session-registry.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/** Options of `sqliteBackend`. */
export interface SqliteBackendOptions {
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * The layout a database without session tables gets (`SqliteSessionStore`'s `newDatabaseLayout`). Default:
   * keyed where the client bills rows (a Durable Object), lean where it does not (better-sqlite3).
   */
  newDatabaseLayout?: NewSessionLayout | undefined;
}

/** Every session store of one SQLite database, as `sqliteBackend` returns it. */
export interface SqliteBackend extends SessionBackend {
  readonly name: "sqlite";
  readonly client: SqlClient;
  readonly runState: SqliteRunStateStore;
  readonly registry: SqliteSessionRegistry;
  /** The session's messages: a `SqliteSessionStore` read through the message tree, as a `Session` reads it. */
  messages(sessionId: string): MessageTree;
  block(label: string, sessionId: string): SqliteContextProvider;
  prompt(sessionId: string): SqliteContextProvider;
}

/**
 * Sessions on one SQLite database: a Durable Object's `ctx.storage` (or `ctx`), an Agent's `sql`, a
 * better-sqlite3 `Database` or a `SqlClient`. Messages in the tables of Cloudflare agents' Sessions API
 * (`SqliteSessionStore`, read through `MessageTree`), blocks and the frozen prompt in `cf_agents_context_blocks` under the session's
 * namespace (`SqliteContextProvider`), run state in `contextblocks_run_state`, the registry in
 * `assistant_sessions`. Each part creates its own tables on first use.
 *
 * ```ts
 * const session = new SessionBuilder(sqliteBackend(ctx.storage)).forSession("chat").withCachedPrompt().build();
 * const manager = new SessionManager(sqliteBackend(ctx.storage));
 * ```
 */
export function sqliteBackend(source: SqlSource, options: SqliteBackendOptions = {}): SqliteBackend {
  const client = toSqliteClient(source, { onStatement: options.onStatement });
  if (client.dialect !== "sqlite") {
    throw new ContextError(
      "INVALID_CONFIG",
      `sqliteBackend needs a SQLite database; this client's dialect is "${client.dialect}"`,
    );
  }
  const { newDatabaseLayout } = options;
  const namespaceOf = (sessionId: string) => (sessionId === "" ? undefined : sessionId);
  const runState = new SqliteRunStateStore(client);
  const registry = new SqliteSessionRegistry(client);
  return {
    name: "sqlite" as const,
    client,
    runState,
    registry,
    messages: (sessionId) =>
      new MessageTree(new SqliteSessionStore(client, { sessionId, newDatabaseLayout })),
    block: (label, sessionId) =>
      sessionId === ""
        ? // The default session's rows are agents' rows too: the plain label.
          new SqliteContextProvider(client, { label })
        : new SessionBlockProvider(client, label, sessionId),
    prompt: (sessionId) =>
      // The frozen prompt is not a block the model writes: no versions.
      new SqliteContextProvider(client, {
        label: SYSTEM_PROMPT_LABEL,
        namespace: namespaceOf(sessionId),
        versions: false,
      }),
    async searchMessages(query: string, limit: number): Promise<SearchResult[]> {
      // Refused before the tables are checked or the index catches up: a bad query does no work.
      checkSearchQuery(query);
      checkSearchLimit(limit);
      const layout = await schemaToRead(client, newDatabaseLayout);
      return layout === null ? [] : runSteps(client, searchAllSteps(client, layout, query, limit));
    },
    searchMessagesSync: answersAtOnce(client)
      ? (query: string, limit: number): SearchResult[] => {
          checkSearchQuery(query);
          checkSearchLimit(limit);
          const layout = schemaToReadAtOnce(client, newDatabaseLayout);
          return layout === null ? [] : runStepsAtOnce(client, searchAllSteps(client, layout, query, limit));
        }
      : undefined,
    deleteSession: (sessionId) => deleteSession(client, sessionId),
  };
}

/**
 * A search over every session's messages, once the tables are at `layout`: the index brought up to the
 * messages appended since the last search where the database takes writes (`catchUpWhereWritable`; the keyed
 * layout writes each search row on append: nothing to catch up), then the best candidates re-ranked and cut.
 */
function* searchAllSteps(
  client: SqlClient,
  layout: SessionLayout,
  query: string,
  limit: number,
): SqlSteps<SearchResult[]> {
  if (layout !== "keyed") yield* catchUpWhereWritable(client);
  const candidates = yield* searchSteps(client, query, {
    limit: candidateCount(limit, maximumSearchLimit),
    sort: searchSortOf(client),
  });
  return selectSearchHits(rerankSearchCandidates(query, candidates), limit);
}

/** True when `assistant_messages` has the keyed layout's `seq`. */
async function keyedLayout(client: SqlClient): Promise<boolean> {
  const rows = await client.query<{ name: string }>`
    SELECT name FROM pragma_table_info('assistant_messages') WHERE name = 'seq'`;
  return rows.length > 0;
}

const ownedTables = [
  "assistant_messages",
  "assistant_compactions",
  "assistant_fts",
  "assistant_leaves",
  "assistant_message_chunks",
  "assistant_message_tombstones",
  "assistant_token_calibration",
  "cf_agents_context_blocks",
  "contextblocks_block_history",
  "contextblocks_block_history_batches",
  "contextblocks_run_state",
  "assistant_sessions",
] as const;

/**
 * Removes everything the session owned in one batch (one transaction on Durable Objects and
 * better-sqlite3): messages, overlays, search rows, the leaf pointer, the blocks and frozen prompt stored
 * under its namespace, its run state and its registry row. Tables that were never created are skipped
 * (nothing is created to delete from it).
 */
async function deleteSession(client: SqlClient, sessionId: string): Promise<void> {
  if (typeof sessionId !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `deleteSession: the session id must be a string, got ${typeof sessionId}`,
    );
  }
  const tables = new Set(
    (
      await client.query<{ name: string }>`
        SELECT name FROM sqlite_master WHERE type = 'table'
        AND name IN (SELECT value FROM json_each(${JSON.stringify(ownedTables)}))`
    ).map((row) => row.name),
  );
  const statements: SqlStatement[] = [];
  const has = (table: (typeof ownedTables)[number]) => tables.has(table);
  if (has("assistant_fts")) {
    // On the keyed layout the largest search rowid never goes back (keyed-tail.ts).
    if (await keyedLayout(client)) statements.push(searchOrderBump);
    statements.push(sql`DELETE FROM assistant_fts WHERE session_id = ${sessionId}`);
  }
  if (has("assistant_message_chunks"))
    statements.push(sql`DELETE FROM assistant_message_chunks WHERE id IN (
      SELECT id FROM assistant_messages WHERE session_id = ${sessionId} AND content_chunks > 0)`);
  if (has("assistant_messages"))
    statements.push(sql`DELETE FROM assistant_messages WHERE session_id = ${sessionId}`);
  if (has("assistant_compactions"))
    statements.push(sql`DELETE FROM assistant_compactions WHERE session_id = ${sessionId}`);
  if (has("assistant_leaves"))
    statements.push(sql`DELETE FROM assistant_leaves WHERE session_id = ${sessionId}`);
  if (has("assistant_message_tombstones"))
    statements.push(sql`DELETE FROM assistant_message_tombstones WHERE session_id = ${sessionId}`);
  if (has("assistant_token_calibration"))
    statements.push(sql`DELETE FROM assistant_token_calibration WHERE session_id = ${sessionId}`);
  if (has("cf_agents_context_blocks")) {
    if (sessionId === "") {
      // The default session's blocks are plain labels, shared with anything else on the database: only
      // its frozen prompt is its own.
      statements.push(sql`DELETE FROM cf_agents_context_blocks WHERE label = ${SYSTEM_PROMPT_LABEL}`);
    } else {
      // Every row label of the namespace starts with MARK + '["<id>",' (see `rowLabel`); the range
      // [prefix, prefix with its last character "," raised to "-") holds exactly those, on the primary key.
      const prefix = namespacePrefix(sessionId);
      const end = `${prefix.slice(0, -1)}-`;
      statements.push(sql`DELETE FROM cf_agents_context_blocks WHERE label >= ${prefix} AND label < ${end}`);
      if (has("contextblocks_block_history")) {
        statements.push(
          sql`DELETE FROM contextblocks_block_history WHERE label >= ${prefix} AND label < ${end}`,
        );
      }
      if (has("contextblocks_block_history_batches")) {
        statements.push(
          sql`DELETE FROM contextblocks_block_history_batches WHERE label >= ${prefix} AND label < ${end}`,
        );
      }
    }
  }
  if (has("contextblocks_run_state"))
    statements.push(sql`DELETE FROM contextblocks_run_state WHERE session_id = ${sessionId}`);
  if (has("assistant_sessions")) statements.push(sql`DELETE FROM assistant_sessions WHERE id = ${sessionId}`);
  if (statements.length > 0) await client.batch(statements);
}
