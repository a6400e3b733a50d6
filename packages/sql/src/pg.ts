import { statementText } from "./placeholders.js";
import { buildStatement } from "./statement.js";
import { namedStatementsOption, statementName } from "./statement-names.js";
import type { SqlClient, SqlClientOptions, SqlRow, SqlStatement, SqlValue } from "./types.js";

/** The part of a node-postgres query result this package uses. */
export interface PgQueryResult {
  readonly rows: unknown[];
  /** Rows the command affected (or returned); `null` for commands that report none. */
  readonly rowCount: number | null;
  /** The command tag: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `BEGIN`, … */
  readonly command?: string;
}

/** A statement as node-postgres takes it; with a `name`, the connection prepares it once and reuses it. */
export interface PgQueryConfig {
  readonly name?: string;
  readonly text: string;
  readonly values?: unknown[];
}

/** The part of a node-postgres `Client` (or a client checked out of a `Pool`) this package uses. */
export interface PgClientLike {
  query(textOrConfig: string | PgQueryConfig, values?: unknown[]): Promise<PgQueryResult>;
}

/** Options of `fromPg`. */
export interface PgOptions extends SqlClientOptions {
  /**
   * Send each statement as a named prepared statement (a name derived from its text), so every connection
   * parses a text once instead of on every call. Default `true`. Turn it off behind a pooler that does not
   * keep prepared statements apart (PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`): it reports `prepared statement "…" does not exist` or `already exists`.
   */
  namedStatements?: boolean | undefined;
}

/** A client checked out of a node-postgres `Pool`: released after the transaction. */
export interface PgPoolClientLike extends PgClientLike {
  /** Gives the client back; with an error, the pool destroys it instead of reusing it. */
  release(error?: Error | boolean): void;
  /** node-postgres clients are EventEmitters: a dropped connection emits `'error'`. */
  on?(event: "error", listener: (error: Error) => void): unknown;
  removeListener?(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * The part of a node-postgres `Pool` this package uses. Told apart from a `Client` by `idleCount`, which a
 * Pool has and a Client does not.
 */
export interface PgPoolLike extends PgClientLike {
  connect(): Promise<PgPoolClientLike>;
  readonly idleCount: number;
}

/** Commands whose `rowCount` is the number of rows written. */
const WRITE_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * A `SqlClient` over node-postgres: a `Client` you have connected, a `Pool`, or (in a Worker) a `Client` on
 * Hyperdrive's connection string: `new pg.Client({ connectionString: env.HYPERDRIVE.connectionString })`.
 *
 * - Placeholders are `$1`, `$2`, …; every value is bound (bigint and boolean as their text, which Postgres
 *   parses; a `Uint8Array` as `bytea`).
 * - `batch` runs `BEGIN` … `COMMIT` (rolled back on the first error). On a `Pool` it checks out one client
 *   for the whole transaction. On a single `Client` the adapter queues every other statement sent through
 *   it until the transaction ends, so a concurrent statement can neither land inside the transaction (and
 *   be rolled back with it) nor interleave with it.
 * - `onStatement` reports `changes` (the driver's `rowCount`) for `INSERT`, `UPDATE`, `DELETE` and `MERGE`.
 * - Statements are named prepared statements unless `namedStatements: false` (see `PgOptions`): a text is
 *   parsed once per connection, and the server may plan it once too (see the README).
 */
export function fromPg(source: PgClientLike | PgPoolLike, options: PgOptions = {}): SqlClient {
  const { onStatement } = options;
  const named = namedStatementsOption(options.namedStatements, "fromPg");
  const pool = isPool(source) ? source : undefined;
  const lock = pool === undefined ? lockOf(source) : undefined;

  const execute = async (connection: PgClientLike, statement: SqlStatement): Promise<SqlRow[]> => {
    const text = statementText(statement, "postgres");
    const values = statement.values.map(toPgValue);
    const name = named ? statementName(text) : undefined;
    // Unnamed, the plain `query(text, values)` form: what a wrapper of one's own over the driver takes.
    const result = await (name === undefined
      ? connection.query(text, values)
      : connection.query({ name, text, values }));
    if (onStatement !== undefined) {
      const command = result.command?.toUpperCase();
      if (command !== undefined && WRITE_COMMANDS.has(command) && typeof result.rowCount === "number") {
        onStatement({ text, changes: result.rowCount });
      } else {
        onStatement({ text });
      }
    }
    return result.rows as SqlRow[];
  };

  const single = (statement: SqlStatement): Promise<SqlRow[]> =>
    lock === undefined ? execute(source, statement) : lock.run(() => execute(source, statement));

  /** Runs the group in BEGIN … COMMIT; `onBroken` hears when even the rollback failed. */
  const transaction = async (
    connection: PgClientLike,
    statements: readonly SqlStatement[],
    onBroken?: () => void,
  ): Promise<SqlRow[][]> => {
    await connection.query("BEGIN");
    try {
      const results: SqlRow[][] = [];
      for (const statement of statements) results.push(await execute(connection, statement));
      await connection.query("COMMIT");
      return results;
    } catch (error) {
      try {
        await connection.query("ROLLBACK");
      } catch {
        // The connection is unusable (it dropped, say): the server aborts the transaction itself.
        onBroken?.();
      }
      throw error;
    }
  };

  return {
    dialect: "postgres",
    atomic: true,
    async query<Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]): Promise<Row[]> {
      return (await single(buildStatement(strings, values))) as Row[];
    },
    async run<Row = SqlRow>(statement: SqlStatement): Promise<Row[]> {
      return (await single(statement)) as Row[];
    },
    async batch(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
      if (statements.length === 0) return [];
      if (statements.length === 1) {
        // One statement is atomic on its own: no BEGIN/COMMIT round trips.
        const only = statements[0] as SqlStatement;
        return [await single(only)];
      }
      if (pool !== undefined) {
        const client = await pool.connect();
        let broken: Error | boolean = false;
        // While checked out, the pool does not listen to the client: a connection dropped now would emit
        // an unhandled 'error' and end the process. Heard here, it fails this batch (its query rejects).
        const onError = (error: Error) => {
          broken = error instanceof Error ? error : true;
        };
        client.on?.("error", onError);
        try {
          return await transaction(client, statements, () => {
            broken = broken === false ? true : broken;
          });
        } finally {
          // A client whose rollback failed or whose connection dropped is in an unknown state: the pool
          // destroys it instead.
          client.release(broken);
          client.removeListener?.("error", onError);
        }
      }
      return (lock as ClientLock).run(() => transaction(source, statements));
    },
  };
}

/** True for a node-postgres `Pool` (or anything with its `query`, `connect` and `idleCount`). */
export function isPgPool(value: unknown): value is PgPoolLike {
  if (!isObject(value)) return false;
  const candidate = value as { query?: unknown; connect?: unknown; idleCount?: unknown };
  return (
    typeof candidate.query === "function" &&
    typeof candidate.connect === "function" &&
    typeof candidate.idleCount === "number"
  );
}

/**
 * True for a node-postgres `Client` (or anything with its `query(text, values)` and `connect()`), and not a
 * `Pool`.
 */
export function isPgClient(value: unknown): value is PgClientLike {
  if (!isObject(value) || isPgPool(value)) return false;
  const candidate = value as { query?: unknown; connect?: unknown };
  return typeof candidate.query === "function" && typeof candidate.connect === "function";
}

function isPool(source: PgClientLike | PgPoolLike): source is PgPoolLike {
  return isPgPool(source);
}

/** bigint as its decimal text (exact; Postgres parses it); everything else as node-postgres binds it. */
function toPgValue(value: SqlValue): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/**
 * One queue per connection: a statement or a transaction runs only once everything queued before it on the
 * same `Client` has finished. node-postgres already sends one query at a time; the queue is what keeps a
 * transaction's statements together.
 */
class ClientLock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work);
    // The next task waits for this one whether it succeeded or failed.
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** Adapters made separately on the same `Client` share its queue. */
const locks = new WeakMap<object, ClientLock>();

function lockOf(client: object): ClientLock {
  let lock = locks.get(client);
  if (lock === undefined) {
    lock = new ClientLock();
    locks.set(client, lock);
  }
  return lock;
}

function isObject(value: unknown): value is object {
  return (typeof value === "object" || typeof value === "function") && value !== null;
}
