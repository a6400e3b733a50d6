import {
  type BetterSqlite3Database,
  type BetterSqlite3Options,
  fromBetterSqlite3,
} from "./better-sqlite3.js";
import { describeValue } from "./describe-value.js";
import { type DurableObjectStorageLike, fromDurableObjectStorage } from "./durable-object-storage.js";
import { fromPg, isPgClient, isPgPool, type PgClientLike, type PgOptions, type PgPoolLike } from "./pg.js";
import { fromPostgresJs, isPostgresJs, type PostgresJsSql } from "./postgres-js.js";
import { fromTaggedTemplate, type TaggedTemplateSqlSource } from "./tagged-template.js";
import type { SqlClient } from "./types.js";

/** A Durable Object's state (`ctx` in a Durable Object class, `state` in `runInDurableObject`). */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
}

/** Everything `toSqlClient` turns into a `SqlClient`. */
export type SqlSource =
  | SqlClient
  | DurableObjectStorageLike
  | DurableObjectStateLike
  | TaggedTemplateSqlSource
  | BetterSqlite3Database
  | PgClientLike
  | PgPoolLike
  | PostgresJsSql;

/** Options of `toSqlClient`: each adapter reads its own (`statementCacheSize`, `namedStatements`). */
export interface SqlSourceOptions extends BetterSqlite3Options, PgOptions {}

/** What `toSqlClient` accepts, for error messages. */
const ACCEPTED =
  "a SqlClient, a Durable Object storage (ctx.storage), a Durable Object state (ctx), " +
  "an object with a tagged-template sql method (an agents Agent), a better-sqlite3 Database, " +
  "a node-postgres Client or Pool, or a postgres (porsager) sql instance";

/**
 * Turn any supported SQL handle into a `SqlClient`, picking the adapter by shape:
 *
 * | source | adapter |
 * |---|---|
 * | a `SqlClient` (`query`, `run`, `batch`, `dialect`) | returned as is (`onStatement` is refused: it cannot be added) |
 * | `ctx.storage` (`sql.exec` and `transactionSync`) | `fromDurableObjectStorage` |
 * | `ctx` / a Durable Object state (`storage` as above) | `fromDurableObjectStorage(ctx.storage)` |
 * | a better-sqlite3 `Database` (`prepare` and `transaction`) | `fromBetterSqlite3` |
 * | an object with a `sql` method (an `agents` Agent) | `fromTaggedTemplate` |
 * | a `postgres` (porsager) `sql` function (`unsafe` and `begin`) | `fromPostgresJs` |
 * | a node-postgres `Pool` (`query`, `connect` and `idleCount`) | `fromPg` |
 * | a node-postgres `Client` (`query` and `connect`) | `fromPg` |
 *
 * Anything else is a `TypeError` naming what is accepted. (A `pg` client has `query(text, values)` but no
 * `batch` or `dialect`, so it cannot be mistaken for a `SqlClient`.)
 */
export function toSqlClient(source: SqlSource, options: SqlSourceOptions = NO_OPTIONS): SqlClient {
  return sharedClient(source, options, adapt);
}

/**
 * `toSqlClient` for SQLite backends: the same client for the same handle, but only SQLite's adapters, so a
 * Worker bundling a SQLite backend does not bundle the Postgres drivers' adapters too. A node-postgres or
 * postgres (porsager) handle is refused with a `TypeError` saying it is a Postgres database.
 */
export function toSqliteClient(source: SqlSource, options: BetterSqlite3Options = NO_OPTIONS): SqlClient {
  return sharedClient(source, options, adaptSqlite);
}

/** What `toSqliteClient` adapts (it takes any `SqlSource`, to refuse a Postgres one by name). */
export type SqliteSource =
  | SqlClient
  | DurableObjectStorageLike
  | DurableObjectStateLike
  | TaggedTemplateSqlSource
  | BetterSqlite3Database;

/**
 * Many providers are handed the same database: without options they share one client (and so one
 * statement cache, and one schema check) per handle instead of building one each, whichever of
 * `toSqlClient` and `toSqliteClient` built it.
 */
function sharedClient(
  source: SqlSource,
  options: SqlSourceOptions,
  adaptSource: (source: SqlSource, options: SqlSourceOptions) => SqlClient,
): SqlClient {
  const shareable =
    options.onStatement === undefined &&
    options.statementCacheSize === undefined &&
    options.namedStatements === undefined;
  const existing = shareable ? sharedClients.get(source) : undefined;
  if (existing !== undefined) return existing;
  const client = adaptSource(source, options);
  if (shareable) sharedClients.set(source, client);
  return client;
}

const sharedClients = new WeakMap<object, SqlClient>();

/** The options of a call that passed none: shared, so the common call allocates nothing. */
const NO_OPTIONS: SqlSourceOptions = Object.freeze({});

function adapt(source: SqlSource, options: SqlSourceOptions): SqlClient {
  const client = adaptSqliteSource(source, options);
  if (client !== undefined) return client;
  // After the Agent check: an Agent is read as an Agent even if it grew query/connect methods.
  if (isPostgresJs(source)) return fromPostgresJs(source, options);
  if (isPgPool(source) || isPgClient(source)) return fromPg(source, options);
  throw new TypeError(`toSqlClient: expected ${ACCEPTED}; got ${describeValue(source)}`);
}

function adaptSqlite(source: SqlSource, options: BetterSqlite3Options): SqlClient {
  const client = adaptSqliteSource(source, options);
  if (client !== undefined) return client;
  if (isPostgresJs(source) || isPgPool(source) || isPgClient(source)) {
    throw new TypeError(
      "toSqliteClient: this is a Postgres database (a node-postgres Client or Pool, or a postgres sql " +
        "instance); a SQLite backend needs SQLite (for Postgres, use @contextblocks/postgres)",
    );
  }
  throw new TypeError(`toSqliteClient: expected ${SQLITE_ACCEPTED}; got ${describeValue(source)}`);
}

const SQLITE_ACCEPTED =
  "a SqlClient, a Durable Object storage (ctx.storage), a Durable Object state (ctx), " +
  "an object with a tagged-template sql method (an agents Agent) or a better-sqlite3 Database";

/** A SQLite handle (or a ready `SqlClient`) as a `SqlClient`; `undefined` for anything else. */
function adaptSqliteSource(source: SqlSource, options: BetterSqlite3Options): SqlClient | undefined {
  if (isSqlClient(source)) {
    if (options.onStatement !== undefined) {
      throw new TypeError(
        "toSqlClient: onStatement cannot be added to a ready SqlClient; pass it where the client is created",
      );
    }
    return source;
  }
  if (isDurableObjectStorage(source)) return fromDurableObjectStorage(source, options);
  if (isDurableObjectState(source)) return fromDurableObjectStorage(source.storage, options);
  if (isBetterSqlite3Database(source)) return fromBetterSqlite3(source, options);
  if (isTaggedTemplateSource(source)) return fromTaggedTemplate(source, options);
  return undefined;
}

/** True for an object that already implements `SqlClient`. */
export function isSqlClient(value: unknown): value is SqlClient {
  if (!isObject(value)) return false;
  const candidate = value as Partial<Record<keyof SqlClient, unknown>>;
  return (
    typeof candidate.query === "function" &&
    typeof candidate.run === "function" &&
    typeof candidate.batch === "function" &&
    (candidate.dialect === "sqlite" || candidate.dialect === "postgres")
  );
}

/** True for a Durable Object's `ctx.storage` with SQLite: `sql.exec` and `transactionSync`. */
export function isDurableObjectStorage(value: unknown): value is DurableObjectStorageLike {
  if (!isObject(value)) return false;
  const candidate = value as { sql?: unknown; transactionSync?: unknown };
  return (
    typeof candidate.transactionSync === "function" &&
    isObject(candidate.sql) &&
    typeof (candidate.sql as { exec?: unknown }).exec === "function"
  );
}

/** True for a Durable Object's state (`ctx`) whose `storage` has SQLite. */
export function isDurableObjectState(value: unknown): value is DurableObjectStateLike {
  return isObject(value) && isDurableObjectStorage((value as { storage?: unknown }).storage);
}

/** True for a better-sqlite3 `Database` (or anything with its `prepare` and `transaction`). */
export function isBetterSqlite3Database(value: unknown): value is BetterSqlite3Database {
  if (!isObject(value)) return false;
  const candidate = value as { prepare?: unknown; transaction?: unknown };
  return typeof candidate.prepare === "function" && typeof candidate.transaction === "function";
}

/** True for an object with a `sql` method, assumed to be a tagged template returning rows. */
export function isTaggedTemplateSource(value: unknown): value is TaggedTemplateSqlSource {
  return isObject(value) && typeof (value as { sql?: unknown }).sql === "function";
}

function isObject(value: unknown): value is object {
  return (typeof value === "object" || typeof value === "function") && value !== null;
}
