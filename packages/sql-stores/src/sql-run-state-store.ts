import { ContextError } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import {
  checkRunStateSessionId,
  type RunStateStore,
  type RunStates,
  runStateRows,
} from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { RUN_STATE_TABLE, TableAccess } from "./tables.js";
import { checkRowSize, checkStorable } from "./text-checks.js";

/** Options of `SqlRunStateStore`. */
export interface SqlRunStateStoreOptions {
  /** Create the table on first save when it is missing. Default `true`. */
  createTables?: boolean | undefined;
  /** The class name errors begin with (`SqliteRunStateStore`, `PostgresRunStateStore`). */
  owner?: string | undefined;
}

/** Deletes the rows of plugins whose state is no longer saved (`kept` is a JSON array of source ids). */
const DELETE_OTHERS = {
  sqlite: (sessionId: string, kept: string) => sql`DELETE FROM contextblocks_run_state
WHERE session_id = ${sessionId} AND source_id NOT IN (SELECT value FROM json_each(${kept}))`,
  postgres: (sessionId: string, kept: string) => sql`DELETE FROM contextblocks_run_state
WHERE session_id = ${sessionId} AND source_id NOT IN (SELECT json_array_elements_text(${kept}::text::json))`,
} satisfies Record<SqlClient["dialect"], (sessionId: string, kept: string) => SqlStatement>;

/** Writes one plugin's state; an unchanged row is not written. */
const UPSERT = {
  sqlite: (sessionId: string, sourceId: string, json: string) => sql`INSERT INTO contextblocks_run_state
  (session_id, source_id, state) VALUES (${sessionId}, ${sourceId}, ${json})
ON CONFLICT(session_id, source_id) DO UPDATE SET state = excluded.state WHERE state IS NOT excluded.state`,
  postgres: (
    sessionId: string,
    sourceId: string,
    json: string,
  ) => sql`INSERT INTO contextblocks_run_state AS run
  (session_id, source_id, state) VALUES (${sessionId}, ${sourceId}, ${json})
ON CONFLICT (session_id, source_id) DO UPDATE SET state = excluded.state
WHERE run.state IS DISTINCT FROM excluded.state`,
} satisfies Record<SqlClient["dialect"], (sessionId: string, sourceId: string, json: string) => SqlStatement>;

/**
 * Where a pipeline keeps its plugins' state, per session (sessions' `RunStateStore`), on any `SqlClient`:
 * one row per (session id, source id) in `contextblocks_run_state`, the state as JSON, in a table of its
 * own created on the first save. A save is one batch (all-or-nothing) that rewrites only the rows whose
 * state changed and deletes those of plugins whose state is gone.
 */
export class SqlRunStateStore implements RunStateStore {
  readonly #access: TableAccess;
  readonly #owner: string;

  constructor(client: SqlClient, options: SqlRunStateStoreOptions = {}) {
    this.#owner = options.owner ?? "SqlRunStateStore";
    if (options.createTables !== undefined && typeof options.createTables !== "boolean") {
      throw new ContextError(
        "INVALID_CONFIG",
        `${this.#owner}: createTables must be a boolean, got ${describeValue(options.createTables)}`,
      );
    }
    this.#access = new TableAccess(client, RUN_STATE_TABLE, options.createTables ?? true, this.#owner);
  }

  /** Every plugin's state of the session, or `null` when none was saved. One statement. */
  async load(sessionId: string): Promise<RunStates | null> {
    this.#checkSessionId(sessionId, "load");
    const client = this.#access.client;
    const rows = await this.#access.read(
      () => client.query<{ source_id: string; state: string }>`SELECT source_id, state
FROM contextblocks_run_state WHERE session_id = ${sessionId}`,
      [],
    );
    if (rows.length === 0) return null;
    const states: RunStates = {};
    for (const row of rows) {
      // defineProperty: a source id "__proto__" is a key like any other, never the object's prototype.
      Object.defineProperty(states, row.source_id, {
        value: this.#parse(row.state, sessionId, row.source_id),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return states;
  }

  /** Replaces the session's states with `states`, in one batch. */
  async save(sessionId: string, states: RunStates): Promise<void> {
    this.#checkSessionId(sessionId, "save");
    const dialect = this.#access.client.dialect;
    // Serialized before anything is written: a state JSON cannot hold fails the save, not half of it.
    const rows = runStateRows(states, this.#owner);
    for (const { sourceId, json } of rows) {
      checkStorable(sourceId, "source id", this.#owner, dialect, "INVALID_INPUT", undefined);
      checkRowSize(
        [sessionId, sourceId, json],
        `state of "${clipped(sourceId)}" (as JSON)`,
        this.#owner,
        undefined,
      );
    }
    const kept = JSON.stringify(rows.map((row) => row.sourceId));
    await this.#access.write([
      DELETE_OTHERS[dialect](sessionId, kept),
      ...rows.map(({ sourceId, json }) => UPSERT[dialect](sessionId, sourceId, json)),
    ]);
  }

  /** Forgets the session's state (when the session is deleted). */
  async delete(sessionId: string): Promise<void> {
    this.#checkSessionId(sessionId, "delete");
    const client = this.#access.client;
    await this.#access.read(
      () => client.query`DELETE FROM contextblocks_run_state WHERE session_id = ${sessionId}`,
      [],
    );
  }

  #checkSessionId(sessionId: unknown, operation: string): asserts sessionId is string {
    const checked = checkRunStateSessionId(sessionId, operation, this.#owner);
    checkStorable(
      checked,
      "session id",
      this.#owner,
      this.#access.client.dialect,
      "INVALID_INPUT",
      undefined,
    );
  }

  /** A row that is not a JSON object fails the load: an empty state would overwrite it on the next save. */
  #parse(json: string, sessionId: string, sourceId: string): Record<string, unknown> {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw this.#stateError(sessionId, sourceId, "is not JSON", error);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw this.#stateError(sessionId, sourceId, `is ${describeValue(value)}, not an object`);
    }
    return value as Record<string, unknown>;
  }

  #stateError(sessionId: string, sourceId: string, problem: string, cause?: unknown): ContextError {
    return new ContextError(
      "PROVIDER_FAILED",
      `${this.#owner}.load: the stored state of "${clipped(sourceId)}" in session "${clipped(sessionId)}" ${problem}; fix or delete that row of ${RUN_STATE_TABLE.name}`,
      cause === undefined ? undefined : { cause },
    );
  }
}
