import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlRow, SqlStatement } from "@contextblocks/sql";
import { isMissingTableError, raw, type SqlDialect } from "@contextblocks/sql/store-kit";

/**
 * A table a store owns, with the statements that create it (and its indexes) in each dialect. Every store
 * creates only its own table, on its first write: a context provider never creates the skills table.
 */
export interface StoreTable {
  /** The table's name (SQLite's "no such table" error names it). */
  readonly name: string;
  /** The creating statements as SQL text, one per `;\n`-separated part, per dialect (all `IF NOT EXISTS`). */
  readonly ddl: Readonly<Record<SqlDialect, string>>;
  /** Postgres SQLSTATE codes that mean "not all there yet". Default `42P01` (`undefined_table`). */
  readonly missingCodes?: readonly string[] | undefined;
}

/** The statements of one dialect's DDL text. */
export function tableStatements(table: StoreTable, dialect: SqlDialect): SqlStatement[] {
  return table.ddl[dialect]
    .split(";\n")
    .map((text) => text.trim())
    .filter((text) => text.length > 0)
    .map(raw);
}

/**
 * `CREATE … IF NOT EXISTS` is not safe against itself on Postgres: two connections creating the same table
 * at once can fail on the system catalogue's unique index. A transaction-scoped advisory lock (a fixed key,
 * "cbpg" in ASCII, the one `@contextblocks/postgres`'s `createTables` takes) makes first writers take turns.
 */
export const SCHEMA_LOCK: SqlStatement = raw("SELECT pg_advisory_xact_lock(1667396711)");

/** One creation per client and table at a time; a success is remembered, a failure tried again. */
const created = new WeakMap<SqlClient, Map<string, Promise<void>>>();

/** Creates `table` on `client` (idempotent): on Postgres in one transaction behind `SCHEMA_LOCK`. */
export function ensureTable(client: SqlClient, table: StoreTable): Promise<void> {
  let tables = created.get(client);
  if (tables === undefined) {
    tables = new Map();
    created.set(client, tables);
  }
  let pending = tables.get(table.name);
  if (pending === undefined) {
    const statements = tableStatements(table, client.dialect);
    pending = client
      .batch(client.dialect === "postgres" ? [SCHEMA_LOCK, ...statements] : statements)
      .then(() => undefined);
    const remembered = pending;
    tables.set(table.name, remembered);
    remembered.catch(() => {
      if (tables.get(table.name) === remembered) tables.delete(table.name);
    });
  }
  return pending;
}

/** True when `error` says `table` (or, on Postgres, a table or column the codes name) is not there yet. */
export function isMissingTable(error: unknown, table: StoreTable, dialect: SqlDialect): boolean {
  if (dialect === "sqlite") return isMissingTableError(error, table.name);
  const codes = table.missingCodes ?? ["42P01"];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && codes.includes(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The error for a missing table when the store may not create it (`createTables: false`). */
export function missingTableError(owner: string, table: StoreTable, cause: unknown): ContextError {
  return new ContextError(
    "PROVIDER_FAILED",
    `${owner}: the table ${table.name} does not exist and createTables is false; create the tables first ` +
      "(run @contextblocks/postgres's schema.sql, also exported as POSTGRES_SCHEMA, once in the database)",
    { cause },
  );
}

/**
 * A store's way to its table: reads on a missing table read as empty (a read creates nothing), writes
 * create it first, unless `createTables` is false (then both say to create the tables).
 */
export class TableAccess {
  readonly client: SqlClient;
  readonly table: StoreTable;
  readonly createTables: boolean;
  readonly owner: string;

  constructor(client: SqlClient, table: StoreTable, createTables: boolean, owner: string) {
    this.client = client;
    this.table = table;
    this.createTables = createTables;
    this.owner = owner;
  }

  /** Runs a read; a missing table reads as `absent`. */
  async read<T>(work: () => Promise<T>, absent: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      return this.readFailed(error, absent);
    }
  }

  /** What a read that threw `error` gives: `absent` for a missing table; anything else is thrown again. */
  readFailed<T>(error: unknown, absent: T): T {
    if (!isMissingTable(error, this.table, this.client.dialect)) throw error;
    if (!this.createTables) throw missingTableError(this.owner, this.table, error);
    return absent;
  }

  /**
   * Runs `statements` as one group; on a missing table creates it and runs them again. On SQLite the table
   * is created in the same group as the write (as `agents/context` does); on Postgres behind the lock first.
   */
  async write(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
    try {
      // One statement is atomic on its own: run it without a transaction around it (as agents/context's
      // writes run), which on SQLite spares a BEGIN and a COMMIT.
      const only = statements.length === 1 ? statements[0] : undefined;
      return only === undefined ? await this.client.batch(statements) : [await this.client.run(only)];
    } catch (error) {
      if (!isMissingTable(error, this.table, this.client.dialect)) throw error;
      if (!this.createTables) throw missingTableError(this.owner, this.table, error);
      if (this.client.dialect === "sqlite") {
        const creating = tableStatements(this.table, "sqlite");
        const results = await this.client.batch([...creating, ...statements]);
        return results.slice(creating.length);
      }
      await ensureTable(this.client, this.table);
      return this.client.batch(statements);
    }
  }

  /**
   * `read` and `write` run at once, on a client that runs statements synchronously (`SqlClient.runSync`:
   * SQLite on a Durable Object or better-sqlite3); `undefined` on any other client.
   */
  get synchronous(): SynchronousTableAccess | undefined {
    const runSync = this.client.runSync;
    if (runSync === undefined) return undefined;
    return {
      read: <Row>(statement: SqlStatement, absent: Row[]): Row[] => {
        try {
          return runSync<Row>(statement);
        } catch (error) {
          return this.readFailed(error, absent);
        }
      },
      write: (statement) => {
        try {
          return runSync(statement);
        } catch (error) {
          if (!isMissingTable(error, this.table, this.client.dialect)) throw error;
          if (!this.createTables) throw missingTableError(this.owner, this.table, error);
          // Each creating statement is `IF NOT EXISTS`; the write runs once the table is there.
          for (const creating of tableStatements(this.table, this.client.dialect)) runSync(creating);
          return runSync(statement);
        }
      },
    };
  }
}

/** `TableAccess` for one statement at a time, run synchronously (`TableAccess.synchronous`). */
export interface SynchronousTableAccess {
  /** Runs a read; a missing table reads as `absent`. */
  read<Row = SqlRow>(statement: SqlStatement, absent: Row[]): Row[];
  /** Runs a write; a missing table is created first (unless `createTables` is false). */
  write(statement: SqlStatement): SqlRow[];
}

/**
 * `cf_agents_context_blocks`: `agents/context`'s columns, in its order, so either may create it first, plus
 * the nullable `prompt_fingerprint` (prompt-fingerprint.ts), created with the table so a first freeze needs
 * no `ALTER TABLE` (a table `agents/context` created gets it on the first write of the prompt).
 */
export const BLOCKS_TABLE: StoreTable = {
  name: "cf_agents_context_blocks",
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  prompt_fingerprint TEXT
)`,
    postgres: `CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  prompt_fingerprint TEXT
);
`,
  },
};

/**
 * `contextblocks_skills`: one row per skill, keyed (scope, key), `scope` being the block's row label. The
 * primary key indexes (scope, key): `load`, `set` and `delete` touch one row whatever the number of skills.
 * `description` comes before `content`, so the listing never reads a large content's overflow pages.
 */
export const SKILLS_TABLE: StoreTable = {
  name: "contextblocks_skills",
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS contextblocks_skills (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  description TEXT,
  content TEXT NOT NULL,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (scope, key)
)`,
    postgres: `CREATE TABLE IF NOT EXISTS contextblocks_skills (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  description TEXT,
  content TEXT NOT NULL,
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  PRIMARY KEY (scope, key)
);
`,
  },
};

/** `contextblocks_run_state`: one row per (session, pipeline plugin), the state as JSON text. */
export const RUN_STATE_TABLE: StoreTable = {
  name: "contextblocks_run_state",
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS contextblocks_run_state (
  session_id TEXT NOT NULL,
  source_id TEXT NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (session_id, source_id)
) WITHOUT ROWID`,
    postgres: `CREATE TABLE IF NOT EXISTS contextblocks_run_state (
  session_id TEXT NOT NULL,
  source_id TEXT NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (session_id, source_id)
);
`,
  },
};

/**
 * `assistant_sessions`: the registry, with the columns Cloudflare agents' Sessions API uses. On Postgres a
 * `position` column (insertion order) breaks ties of `updated_at`, as SQLite's `rowid` does, and an index
 * serves the listing, so `list({ limit })` reads only its rows there. On SQLite the listing reads every row and
 * returns the first `limit`: an index on `updated_at` would cost every registry write one more written row on a
 * Durable Object (the `touch` after each message a manager session stores: 2 rows where it writes 1), to save
 * reads billed a thousandth of a write.
 */
export const REGISTRY_TABLE: StoreTable = {
  name: "assistant_sessions",
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS assistant_sessions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  parent_session_id TEXT,
  model TEXT,
  source TEXT,
  input_tokens INTEGER DEFAULT 0,
  output_tokens INTEGER DEFAULT 0,
  estimated_cost REAL DEFAULT 0,
  end_reason TEXT,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
)`,
    postgres: `CREATE TABLE IF NOT EXISTS assistant_sessions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  parent_session_id TEXT,
  model TEXT,
  source TEXT,
  input_tokens BIGINT DEFAULT 0,
  output_tokens BIGINT DEFAULT 0,
  estimated_cost DOUBLE PRECISION DEFAULT 0,
  end_reason TEXT,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  position BIGINT GENERATED BY DEFAULT AS IDENTITY
);

CREATE INDEX IF NOT EXISTS idx_assistant_sessions_updated
  ON assistant_sessions (updated_at DESC, position DESC);
`,
  },
};
