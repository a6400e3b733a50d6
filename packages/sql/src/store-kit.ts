/**
 * `@contextblocks/sql/store-kit`: helpers for authors of backends over `SqlClient` (our SQLite, FTS5 and
 * Postgres backends import them): statement building, row-size checks, driver detection and the subset
 * of each driver's API the adapters use. Applications import the main entry.
 */
export type {
  BetterSqlite3Database,
  BetterSqlite3Options,
  BetterSqlite3Statement,
} from "./better-sqlite3.js";
export { databaseOf } from "./database-of.js";
export type {
  DurableObjectSqlCursor,
  DurableObjectSqlStorage,
  DurableObjectStorageLike,
} from "./durable-object-storage.js";
export { limitLiteral } from "./limit-literal.js";
export {
  isPgClient,
  isPgPool,
  type PgClientLike,
  type PgPoolClientLike,
  type PgQueryConfig,
  type PgQueryResult,
} from "./pg.js";
export { statementText } from "./placeholders.js";
export {
  isPostgresJs,
  type PostgresJsRows,
  type PostgresJsSql,
  type PostgresJsSqlLike,
} from "./postgres-js.js";
export { isReadOnlyRefusal } from "./read-only.js";
export { maxRowBytes, rowBytesOver, rowTooLarge, utf8Bytes, utf8Prefix } from "./row-bytes.js";
export { buildStatement, isSqlStatement, join, raw, type SqlTemplateValue } from "./statement.js";
export { type StatementShapes, statementShapes } from "./statement-shapes.js";
export type { TaggedTemplateSqlSource } from "./tagged-template.js";
export { isMissingTableError } from "./text.js";
export {
  type DurableObjectStateLike,
  isBetterSqlite3Database,
  isDurableObjectState,
  isDurableObjectStorage,
  isSqlClient,
  isTaggedTemplateSource,
  type SqliteSource,
  toSqliteClient,
} from "./to-sql-client.js";
export type { SqlDialect } from "./types.js";
