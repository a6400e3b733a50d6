/** A value bound as a statement parameter. Values are never spliced into SQL text. */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/** A row as the backend returns it. */
export type SqlRow = Record<string, unknown>;

/** The SQL dialect of a client: decides placeholder syntax and which statements a provider may use. */
export type SqlDialect = "sqlite" | "postgres";

/**
 * A statement built by the `sql` tag: the literal parts of the template and the values between them.
 * Dialect-neutral: each adapter turns the parts into its own placeholder syntax (`?` or `$1`).
 * Invariant: `strings.length === values.length + 1`.
 */
export interface SqlStatement {
  readonly strings: readonly string[];
  readonly values: readonly SqlValue[];
}

/** What one executed statement cost, where the backend reports it. */
export interface StatementReport {
  /** The statement text with placeholders, as sent to the backend. */
  readonly text: string;
  /** Rows the backend read (Durable Objects report this; Cloudflare bills it). */
  readonly rowsRead?: number;
  /** Rows the backend wrote (Durable Objects report this; Cloudflare bills it). */
  readonly rowsWritten?: number;
  /**
   * Rows inserted, updated or deleted, as SQLite counts them (better-sqlite3 reports this for statements
   * that return no rows). Not a billing figure: Durable Objects also bill index writes.
   */
  readonly changes?: number;
}

/**
 * Called after every statement a client runs successfully (in a batch, after each statement of the group).
 * It must not throw: an error it throws reaches the caller after the statement has run (inside a batch it
 * aborts the group).
 */
export type StatementObserver = (report: StatementReport) => void;

/** Options every adapter accepts. */
export interface SqlClientOptions {
  /** Per-statement report: text, and rows read and written where the backend tells. */
  onStatement?: StatementObserver | undefined;
}

/**
 * The whole storage surface providers use. Small on purpose: any backend that can run a parameterised
 * statement and return rows can implement it.
 */
export interface SqlClient {
  readonly dialect: SqlDialect;
  /** Run one statement written as a tagged template; always resolves to the rows (empty for writes). */
  query<Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]): Promise<Row[]>;
  /** Run one statement built earlier with the `sql` tag. */
  run<Row = SqlRow>(statement: SqlStatement): Promise<Row[]>;
  /**
   * Run statements in order as one atomic group where the backend allows it (`atomic` tells),
   * resolving to each statement's rows. On failure nothing of the group is applied.
   */
  batch(statements: readonly SqlStatement[]): Promise<SqlRow[][]>;
  /** True when `batch` is all-or-nothing on this backend. */
  readonly atomic: boolean;
  /**
   * True when the backend bills every row a statement reads and writes (a Durable Object's SQLite storage:
   * Cloudflare bills `rowsRead` and `rowsWritten`), false when rows cost nothing but time (better-sqlite3). A
   * provider with two ways to do a thing (fewer rows, or less time) chooses by it; omitted means not known,
   * and is taken as billed.
   */
  readonly billsRows?: boolean;
  /**
   * `run`, answered synchronously, on backends that are synchronous underneath (better-sqlite3, a Durable
   * Object's `ctx.storage.sql`); absent elsewhere (Postgres). Lets a caller on a hot path skip the promise
   * `run` wraps the same rows in.
   */
  readonly runSync?: (<Row = SqlRow>(statement: SqlStatement) => Row[]) | undefined;
  /**
   * `batch`, answered synchronously and as atomically, where `runSync` is: one transaction on better-sqlite3,
   * `transactionSync` on a Durable Object. Lets work that must answer at once write a group too.
   */
  readonly batchSync?: ((statements: readonly SqlStatement[]) => SqlRow[][]) | undefined;
}
