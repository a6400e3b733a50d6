import { ContextError } from "@contextblocks/core";
import type { RunStateStore, RunStates } from "@contextblocks/sessions";
import { type SqlClient, type SqlSource, sql, toSqlClient } from "@contextblocks/sql";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { kindOf } from "./storage-key.js";

/** The table of pipeline plugin state: one row per session and plugin. */
export const runStateTable = "contextblocks_run_state";

/**
 * A `RunStateStore` in the session's SQLite database (`ctx.storage`, better-sqlite3, a `SqlClient`, or a
 * `SqliteSessionStore`'s database): one row per (session id, source id) holding the plugin's state as
 * JSON, in a table of its own created on first use. A save is one batch (all-or-nothing where the backend
 * is) that rewrites only the rows whose state changed, and deletes those of plugins whose state emptied.
 *
 * ```ts
 * const pipeline = contextPipeline({ model, providers, stateStore: new SqliteRunStateStore(ctx.storage) });
 * ```
 */
export class SqliteRunStateStore implements RunStateStore {
  readonly #client: SqlClient;

  constructor(source: SqlSource | SqliteSessionStore) {
    if (source === null || (typeof source !== "object" && typeof source !== "function")) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteRunStateStore: expected a database or a SqliteSessionStore, got ${kindOf(source)}`,
      );
    }
    this.#client = source instanceof SqliteSessionStore ? source.client : toSqlClient(source);
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteRunStateStore needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
  }

  async load(sessionId: string): Promise<RunStates | null> {
    checkSessionId(sessionId, "load");
    await this.#ready();
    const rows = await this.#client.query<{ source_id: string; state: string }>`
      SELECT source_id, state FROM contextblocks_run_state WHERE session_id = ${sessionId}`;
    if (rows.length === 0) return null;
    const states: RunStates = {};
    for (const row of rows) states[row.source_id] = parseState(row.state, sessionId, row.source_id);
    return states;
  }

  async save(sessionId: string, states: RunStates): Promise<void> {
    checkSessionId(sessionId, "save");
    if (typeof states !== "object" || states === null || Array.isArray(states)) {
      throw new ContextError(
        "INVALID_INPUT",
        `SqliteRunStateStore.save: states must be an object of states by source id, got ${kindOf(states)}`,
      );
    }
    // Serialized before anything is written: a state JSON cannot hold fails the save, not half of it.
    const rows = Object.entries(states).map(([sourceId, state]) => ({
      sourceId,
      json: stateJson(state, sourceId),
    }));
    await this.#ready();
    const kept = JSON.stringify(rows.map((row) => row.sourceId));
    await this.#client.batch([
      sql`DELETE FROM contextblocks_run_state WHERE session_id = ${sessionId}
        AND source_id NOT IN (SELECT value FROM json_each(${kept}))`,
      ...rows.map(
        ({ sourceId, json }) => sql`INSERT INTO contextblocks_run_state (session_id, source_id, state)
          VALUES (${sessionId}, ${sourceId}, ${json})
          ON CONFLICT(session_id, source_id) DO UPDATE SET state = excluded.state
          WHERE state IS NOT excluded.state`,
      ),
    ]);
  }

  /** Forgets every plugin's state of a session (when the session is deleted). */
  async delete(sessionId: string): Promise<void> {
    checkSessionId(sessionId, "delete");
    await this.#ready();
    await this.#client.query`DELETE FROM contextblocks_run_state WHERE session_id = ${sessionId}`;
  }

  #ready(): Promise<void> {
    let promise = ready.get(this.#client);
    if (promise === undefined) {
      promise = this.#client.query`CREATE TABLE IF NOT EXISTS contextblocks_run_state (
          session_id TEXT NOT NULL,
          source_id TEXT NOT NULL,
          state TEXT NOT NULL,
          PRIMARY KEY (session_id, source_id)
        ) WITHOUT ROWID`.then(() => undefined);
      promise.catch(() => ready.delete(this.#client));
      ready.set(this.#client, promise);
    }
    return promise;
  }
}

/** One table check per client and process. */
const ready = new WeakMap<SqlClient, Promise<void>>();

function checkSessionId(sessionId: unknown, operation: string): void {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `SqliteRunStateStore.${operation}: the session id must be a non-empty string, got ${kindOf(sessionId)}`,
    );
  }
}

function stateJson(state: unknown, sourceId: string): string {
  if (typeof state !== "object" || state === null || Array.isArray(state)) {
    throw new ContextError(
      "INVALID_INPUT",
      `SqliteRunStateStore.save: the state of "${sourceId}" must be an object, got ${kindOf(state)}`,
    );
  }
  try {
    return JSON.stringify(state);
  } catch (error) {
    throw new ContextError(
      "INVALID_INPUT",
      `SqliteRunStateStore.save: the state of "${sourceId}" cannot be stored as JSON: ${String(error)}`,
      { cause: error },
    );
  }
}

/** A row that is not a JSON object fails the load: an empty state would overwrite it on the next save. */
function parseState(json: string, sessionId: string, sourceId: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw stateError(sessionId, sourceId, "is not JSON", error);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw stateError(sessionId, sourceId, `is ${kindOf(value)}, not an object`);
  }
  return value as Record<string, unknown>;
}

function stateError(sessionId: string, sourceId: string, problem: string, cause?: unknown): ContextError {
  return new ContextError(
    "PROVIDER_FAILED",
    `SqliteRunStateStore.load: the stored state of "${sourceId}" in session "${sessionId}" ${problem}; fix or delete that row of ${runStateTable}`,
    cause === undefined ? undefined : { cause },
  );
}
