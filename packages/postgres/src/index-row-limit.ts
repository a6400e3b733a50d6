import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlRow, SqlStatement, SqlValue } from "@contextblocks/sql";

/**
 * A Postgres client whose writes name a value too long for a B-tree index: a key, label, session id or message
 * id is part of a primary key, and Postgres refuses an index entry over 2,704 bytes (after its compression) with
 * `program_limit_exceeded`, "index row size 3016 exceeds btree version 4 maximum 2704 for index …", which names
 * no value of ours. The statement is refused whole, as Postgres refuses it; the error says what to shorten.
 * One wrapper per client, so what is remembered per client (tables checked, shared settings) stays shared.
 */
export function namingIndexLimits(client: SqlClient): SqlClient {
  if (wrappers.has(client)) return client;
  const known = wrapped.get(client);
  if (known !== undefined) return known;
  const named = <Result>(running: Promise<Result>): Promise<Result> =>
    running.catch((error: unknown) => {
      throw indexLimitError(error) ?? error;
    });
  const wrapper: SqlClient = {
    dialect: client.dialect,
    atomic: client.atomic,
    ...(client.billsRows === undefined ? {} : { billsRows: client.billsRows }),
    query: <Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]) =>
      named(client.query<Row>(strings, ...values)),
    run: <Row = SqlRow>(statement: SqlStatement) => named(client.run<Row>(statement)),
    batch: (statements: readonly SqlStatement[]) => named(client.batch(statements)),
  };
  wrapped.set(client, wrapper);
  wrappers.add(wrapper);
  return wrapper;
}

const wrapped = new WeakMap<SqlClient, SqlClient>();
const wrappers = new WeakSet<SqlClient>();

/** Postgres's `program_limit_exceeded` for an index entry, as an `INVALID_INPUT` that says what to shorten. */
function indexLimitError(error: unknown): ContextError | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "54000" || typeof message !== "string" || !message.includes("index row")) return undefined;
  return new ContextError(
    "INVALID_INPUT",
    `Postgres refused the write: a key, label, session id or message id is too long for its index (${message}); ` +
      "an index entry holds at most 2,704 bytes of them together, so shorten it",
    { cause: error },
  );
}
