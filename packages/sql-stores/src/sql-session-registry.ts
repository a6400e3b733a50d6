import { ContextError } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import type { SessionInfo } from "@contextblocks/sessions";
import type {
  CreateSessionOptions,
  ListSessionsOptions,
  SessionChanges,
  SessionRegistry,
  SynchronousSessionRegistry,
} from "@contextblocks/sessions/store-kit";
import { checkListLimit, checkSessionText, checkUsageArguments } from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlRow, type SqlStatement, sql } from "@contextblocks/sql";
import { join, raw } from "@contextblocks/sql/store-kit";
import { REGISTRY_TABLE, TableAccess } from "./tables.js";
import { checkRowSize, checkStorable } from "./text-checks.js";
import { writeTime } from "./write-clock.js";

/** Options of `SqlSessionRegistry`. */
export interface SqlSessionRegistryOptions {
  /** Create the table on first write when it is missing. Default `true`. */
  createTables?: boolean | undefined;
  /** The class name errors begin with (`SqliteSessionRegistry`, `PostgresSessionRegistry`). */
  owner?: string | undefined;
}

/** Per-dialect spelling: the columns of a `SessionInfo`, and the listing's order. */
const DIALECT = {
  sqlite: {
    columns: raw(
      "id, name, parent_session_id, model, source, input_tokens, output_tokens, estimated_cost, end_reason, created_at, updated_at",
    ),
    order: raw("updated_at DESC, rowid DESC"),
  },
  postgres: {
    // The same text SQLite stores (UTC, milliseconds), and numbers as numbers whatever the driver.
    columns: raw(`id, name, parent_session_id, model, source,
  input_tokens::float8 AS input_tokens, output_tokens::float8 AS output_tokens, estimated_cost::float8 AS estimated_cost,
  end_reason,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS created_at,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS updated_at`),
    // Qualified: a bare `updated_at` would name the text column above (milliseconds), which orders two
    // writes in one millisecond by position and no index can serve.
    order: raw("assistant_sessions.updated_at DESC, assistant_sessions.position DESC"),
  },
} satisfies Record<SqlClient["dialect"], { columns: SqlStatement; order: SqlStatement }>;

/**
 * Postgres' write time: clock_timestamp(), not NOW(), so two writes in one transaction still order by time
 * (and by `position` within one). SQLite's is `writeTime`.
 */
const POSTGRES_NOW = raw("clock_timestamp()");

/**
 * The named sessions of one database (sessions' `SessionRegistry`) on any `SqlClient`: one row per session
 * in `assistant_sessions`, the table Cloudflare agents' Sessions API keeps, created (only it) on the first
 * write. Every write moves `updated_at`; each method is one statement.
 */
export class SqlSessionRegistry implements SessionRegistry {
  readonly #access: TableAccess;
  readonly #owner: string;

  constructor(client: SqlClient, options: SqlSessionRegistryOptions = {}) {
    this.#owner = options.owner ?? "SqlSessionRegistry";
    if (options.createTables !== undefined && typeof options.createTables !== "boolean") {
      throw new ContextError(
        "INVALID_CONFIG",
        `${this.#owner}: createTables must be a boolean, got ${describeValue(options.createTables)}`,
      );
    }
    this.#access = new TableAccess(client, REGISTRY_TABLE, options.createTables ?? true, this.#owner);
  }

  /** Adds a row; refuses (`INVALID_INPUT`) an id that exists. */
  async create(id: string, name: string, options: CreateSessionOptions = {}): Promise<SessionInfo> {
    const insert = this.#createStatement(id, name, options);
    const [rows] = await this.#access.write([insert]);
    return this.#created(rows, id);
  }

  /** The session's row, or `null`. */
  async get(id: string): Promise<SessionInfo | null> {
    if (typeof id !== "string") return null;
    const rows = await this.#select(this.#getTail(id));
    return rows[0] ?? null;
  }

  /** Every session (or the first `limit`: the statement's `LIMIT`), most recently updated first. */
  async list(options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
    return this.#select(this.#listTail(options));
  }

  /** Changes the name or end reason (and moves `updated_at`); `NOT_FOUND` for an unknown id. */
  async update(id: string, changes: SessionChanges): Promise<void> {
    const statement = this.#updateStatement(id, changes);
    const [rows] = await this.#access.write([statement]);
    this.#updated(rows, id);
  }

  /** Moves `updated_at`. An unknown id (or no table yet) is ignored. */
  async touch(id: string): Promise<void> {
    const client = this.#access.client;
    await this.#access.read(
      () =>
        client.run(sql`UPDATE assistant_sessions SET updated_at = ${this.#now()} WHERE id = ${String(id)}`),
      [],
    );
  }

  /** Adds to the usage counters (finite numbers only) and moves `updated_at`. */
  async addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): Promise<void> {
    const statement = this.#addUsageStatement(id, inputTokens, outputTokens, cost);
    const client = this.#access.client;
    await this.#access.read(() => client.run(statement), []);
  }

  /** Removes the row (only the row). An unknown id is a no-op. */
  async delete(id: string): Promise<void> {
    const client = this.#access.client;
    await this.#access.read(
      () => client.run(sql`DELETE FROM assistant_sessions WHERE id = ${String(id)}`),
      [],
    );
  }

  /**
   * The same statements run at once where the client runs them synchronously (SQLite on a Durable Object or
   * better-sqlite3: `SqlClient.runSync`); `undefined` on Postgres.
   */
  get synchronous(): SynchronousSessionRegistry | undefined {
    const access = this.#access.synchronous;
    if (access === undefined) return undefined;
    const select = (tail: SqlStatement) => access.read<SessionInfo>(this.#selectStatement(tail), []);
    return {
      create: (id, name, options = {}) =>
        this.#created(access.write(this.#createStatement(id, name, options)), id),
      get: (id) => (typeof id !== "string" ? null : (select(this.#getTail(id))[0] ?? null)),
      list: (options = {}) => select(this.#listTail(options)),
      update: (id, changes) => this.#updated(access.write(this.#updateStatement(id, changes)), id),
      addUsage: (id, inputTokens, outputTokens, cost) => {
        access.read(this.#addUsageStatement(id, inputTokens, outputTokens, cost), []);
      },
    };
  }

  /** `create`'s insert, its arguments checked first. */
  #createStatement(id: string, name: string, options: CreateSessionOptions): SqlStatement {
    this.#text(id, "session id", "create", false);
    this.#text(name, "name", "create", true);
    const parent = this.#optional(options.parentSessionId, "parentSessionId");
    const model = this.#optional(options.model, "model");
    const source = this.#optional(options.source, "source");
    checkRowSize(
      [id, name, parent ?? "", model ?? "", source ?? ""],
      "session",
      `${this.#owner}.create`,
      undefined,
    );
    const { columns } = this.#dialect();
    const now = this.#now();
    return sql`INSERT INTO assistant_sessions (id, name, parent_session_id, model, source, created_at, updated_at)
VALUES (${id}, ${name}, ${parent}, ${model}, ${source}, ${now}, ${now})
ON CONFLICT (id) DO NOTHING
RETURNING ${columns}`;
  }

  /** The row `create`'s insert returned; none when the id exists. */
  #created(rows: SqlRow[] | undefined, id: string): SessionInfo {
    const row = rows?.[0] as SessionInfo | undefined;
    if (row === undefined) {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.create: a session with id "${clipped(id)}" already exists`,
      );
    }
    return row;
  }

  #getTail(id: string): SqlStatement {
    return sql`WHERE id = ${id}`;
  }

  #listTail(options: ListSessionsOptions): SqlStatement {
    const order = this.#dialect().order;
    if (options.limit === undefined) return sql`ORDER BY ${order}`;
    const limit = checkListLimit(options.limit, this.#owner);
    return sql`ORDER BY ${order} LIMIT ${limit}`;
  }

  /** `update`'s statement, every change checked before it is built. */
  #updateStatement(id: string, changes: SessionChanges): SqlStatement {
    if (typeof changes !== "object" || changes === null) {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.update: changes must be an object, got ${describeValue(changes)}`,
      );
    }
    const sets: SqlStatement[] = [sql`updated_at = ${this.#now()}`];
    if (changes.name !== undefined) {
      this.#text(changes.name, "name", "update", true);
      sets.push(sql`name = ${changes.name}`);
    }
    if (changes.endReason !== undefined) {
      if (changes.endReason !== null) this.#text(changes.endReason, "endReason", "update", true);
      sets.push(sql`end_reason = ${changes.endReason}`);
    }
    checkRowSize(
      [String(id), changes.name ?? "", changes.endReason ?? ""],
      "name and end reason",
      `${this.#owner}.update`,
      undefined,
    );
    return sql`UPDATE assistant_sessions SET ${join(sets)} WHERE id = ${String(id)} RETURNING id`;
  }

  /** What `update`'s statement returned: no row for an unknown id. */
  #updated(rows: SqlRow[] | undefined, id: string): void {
    if ((rows?.length ?? 0) === 0) {
      throw new ContextError("NOT_FOUND", `${this.#owner}.update: no session "${clipped(String(id))}"`);
    }
  }

  #addUsageStatement(id: string, inputTokens: number, outputTokens: number, cost: number): SqlStatement {
    checkUsageArguments(inputTokens, outputTokens, cost, this.#owner);
    return sql`UPDATE assistant_sessions SET
  input_tokens = input_tokens + ${inputTokens},
  output_tokens = output_tokens + ${outputTokens},
  estimated_cost = estimated_cost + ${cost},
  updated_at = ${this.#now()}
WHERE id = ${String(id)}`;
  }

  /** The time a write stores: on SQLite strictly after the last one on this client (`writeTime`). */
  #now(): SqlStatement {
    const client = this.#access.client;
    return client.dialect === "sqlite" ? sql`${writeTime(client)}` : POSTGRES_NOW;
  }

  #dialect(): (typeof DIALECT)[keyof typeof DIALECT] {
    return DIALECT[this.#access.client.dialect];
  }

  #select(tail: SqlStatement): Promise<SessionInfo[]> {
    const client = this.#access.client;
    return this.#access.read(() => client.run<SessionInfo>(this.#selectStatement(tail)), []);
  }

  /** The rows of `assistant_sessions` that `tail` (a `WHERE`, an `ORDER BY`) picks, as `SessionInfo`s. */
  #selectStatement(tail: SqlStatement): SqlStatement {
    return sql`SELECT ${this.#dialect().columns} FROM assistant_sessions ${tail}`;
  }

  #text(value: unknown, what: string, operation: string, emptyAllowed: boolean): asserts value is string {
    const text = checkSessionText(value, what, operation, { emptyAllowed, owner: this.#owner });
    checkStorable(text, what, this.#owner, this.#access.client.dialect, "INVALID_INPUT", undefined);
  }

  #optional(value: unknown, what: string): string | null {
    if (value === undefined || value === null) return null;
    this.#text(value, what, "create", true);
    return value;
  }
}
