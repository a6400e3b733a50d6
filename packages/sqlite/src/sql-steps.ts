import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlRow, SqlStatement } from "@contextblocks/sql";

/** One request of work written as steps: a statement's rows, or an atomic group's. */
export type SqlStep = { readonly statement: SqlStatement } | { readonly group: readonly SqlStatement[] };

/**
 * Work over SQL written once as a generator of requests, then run by either driver: `runSteps` (any SQLite
 * client, awaiting each answer) or `runStepsAtOnce` (a client that answers synchronously: better-sqlite3, a
 * Durable Object). A statement that fails is thrown into the generator, so its own `try` sees it.
 */
export type SqlSteps<T> = Generator<SqlStep, T, unknown>;

/** The rows of one statement: `yield* rowsOf(statement)`. */
export function* rowsOf<Row = SqlRow>(statement: SqlStatement): SqlSteps<Row[]> {
  return (yield { statement }) as Row[];
}

/** The rows of each statement of an atomic group (`SqlClient.batch`): `yield* groupOf(statements)`. */
export function* groupOf(statements: readonly SqlStatement[]): SqlSteps<SqlRow[][]> {
  return (yield { group: statements }) as SqlRow[][];
}

/** Runs the steps on `client`, one request at a time. */
export async function runSteps<T>(client: SqlClient, steps: SqlSteps<T>): Promise<T> {
  let next = steps.next();
  while (next.done !== true) {
    const step = next.value;
    let answer: unknown;
    try {
      answer = "statement" in step ? await client.run(step.statement) : await client.batch(step.group);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(answer);
  }
  return next.value;
}

/** Whether `client` answers statements and atomic groups synchronously (`runStepsAtOnce` can run on it). */
export function answersAtOnce(client: SqlClient): boolean {
  return client.runSync !== undefined && client.batchSync !== undefined;
}

/** Runs the steps on a client that answers synchronously (`answersAtOnce`), returning their result at once. */
export function runStepsAtOnce<T>(client: SqlClient, steps: SqlSteps<T>): T {
  if (!answersAtOnce(client)) {
    throw new ContextError(
      "UNSUPPORTED",
      "this SQLite client cannot answer at once (it has no runSync and batchSync): await the method's promise form",
    );
  }
  let next = steps.next();
  while (next.done !== true) {
    const step = next.value;
    let answer: unknown;
    try {
      // Called on the client, as `run` and `batch` are (a client's methods may read `this`).
      answer = "statement" in step ? client.runSync?.(step.statement) : client.batchSync?.(step.group);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(answer);
  }
  return next.value;
}
