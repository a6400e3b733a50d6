import { withDatabase } from "./database-of.js";
import { statementText } from "./placeholders.js";
import { booleanAsInteger } from "./sqlite-values.js";
import { buildStatement } from "./statement.js";
import type { SqlClient, SqlClientOptions, SqlRow, SqlStatement, SqlValue } from "./types.js";

/** The transaction part of a Durable Object's storage, found on an agent's `ctx.storage`. */
interface TransactionalStorage {
  transactionSync<T>(closure: () => T): T;
}

/**
 * Anything with a tagged-template `sql` method that returns the rows, synchronously or as a promise:
 * an `agents` Agent (`this.sql\`...\``) is one.
 */
export interface TaggedTemplateSqlSource {
  // biome-ignore lint/suspicious/noExplicitAny: each source types its own values; we pass SqlValues.
  sql(strings: TemplateStringsArray, ...values: any[]): readonly unknown[] | PromiseLike<readonly unknown[]>;
}

/**
 * A `SqlClient` over an object with a tagged-template `sql` method (an `agents` Agent).
 *
 * `batch` is atomic only when the source also exposes a Durable Object's storage as `ctx.storage` (an Agent
 * does): the group then runs inside `ctx.storage.transactionSync`, which requires the source's `sql` to be
 * synchronous. Otherwise statements run one after another and `atomic` is false.
 * `onStatement` reports the statement text only: a tagged-template source does not expose row counts
 * (pass `ctx.storage` to `fromDurableObjectStorage` for those).
 */
export function fromTaggedTemplate(
  source: TaggedTemplateSqlSource,
  options: SqlClientOptions = {},
): SqlClient {
  const { onStatement } = options;
  const storage = transactionalStorageOf(source);

  const send = (statement: SqlStatement): readonly unknown[] | PromiseLike<readonly unknown[]> => {
    const text = statementText(statement, "sqlite");
    const result = source.sql(templateOf(statement.strings), ...statement.values.map(booleanAsInteger));
    if (isPromiseLike(result)) {
      return result.then((rows) => {
        onStatement?.({ text });
        return rows;
      });
    }
    onStatement?.({ text });
    return result;
  };

  const execute = async (statement: SqlStatement): Promise<SqlRow[]> => rowsOf(await send(statement));

  const client: SqlClient = {
    dialect: "sqlite",
    atomic: storage !== undefined,
    // An agents Agent's `sql` runs on its Durable Object's storage, which bills rows read.
    billsRows: true,
    async query<Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]): Promise<Row[]> {
      return (await execute(buildStatement(strings, values))) as Row[];
    },
    async run<Row = SqlRow>(statement: SqlStatement): Promise<Row[]> {
      return (await execute(statement)) as Row[];
    },
    async batch(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
      if (statements.length === 0) return [];
      if (storage === undefined) {
        const results: SqlRow[][] = [];
        for (const statement of statements) results.push(await execute(statement));
        return results;
      }
      // Throwing inside transactionSync rolls the group back.
      return storage.transactionSync(() =>
        statements.map((statement) => sendAtOnce(statement, "an atomic batch")),
      );
    },
    // With a Durable Object's storage beside it the source's `sql` is that storage's, which answers at once.
    runSync:
      storage === undefined
        ? undefined
        : <Row = SqlRow>(statement: SqlStatement): Row[] => sendAtOnce(statement, "runSync") as Row[],
    batchSync:
      storage === undefined
        ? undefined
        : (statements: readonly SqlStatement[]): SqlRow[][] =>
            statements.length === 0
              ? []
              : storage.transactionSync(() =>
                  statements.map((statement) => sendAtOnce(statement, "an atomic batch")),
                ),
  };
  // The Durable Object's database, shared with a client of its `ctx.storage`; without one, this source's own.
  return withDatabase(client, storage ?? source);

  function sendAtOnce(statement: SqlStatement, what: string): SqlRow[] {
    const result = send(statement);
    if (isPromiseLike(result)) {
      throw new TypeError(
        `fromTaggedTemplate: the source's sql returned a promise; ${what} needs a synchronous sql method (a Durable Object's)`,
      );
    }
    return rowsOf(result);
  }
}

/** The source's `ctx.storage` when it can run a synchronous transaction (a Durable Object's storage). */
function transactionalStorageOf(source: object): TransactionalStorage | undefined {
  const context: unknown = (source as { ctx?: unknown }).ctx;
  if (typeof context !== "object" || context === null) return undefined;
  const storage: unknown = (context as { storage?: unknown }).storage;
  if (typeof storage !== "object" || storage === null) return undefined;
  const candidate = storage as Partial<TransactionalStorage>;
  if (typeof candidate.transactionSync !== "function") return undefined;
  return storage as TransactionalStorage;
}

/** Template parts as a `TemplateStringsArray`, for sources that read `raw` as well. */
function templateOf(strings: readonly string[]): TemplateStringsArray {
  if (Object.hasOwn(strings, "raw")) return strings as TemplateStringsArray;
  return Object.freeze(Object.assign([...strings], { raw: Object.freeze([...strings]) }));
}

function isPromiseLike(value: unknown): value is PromiseLike<readonly unknown[]> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function rowsOf(result: readonly unknown[]): SqlRow[] {
  if (!Array.isArray(result)) {
    throw new TypeError("fromTaggedTemplate: the source's sql method must return an array of rows");
  }
  return result as SqlRow[];
}
