export {
  type BetterSqlite3Database,
  type BetterSqlite3Options,
  type BetterSqlite3Statement,
  fromBetterSqlite3,
} from "./better-sqlite3.js";
export {
  type DurableObjectSqlCursor,
  type DurableObjectSqlStorage,
  type DurableObjectStorageLike,
  fromDurableObjectStorage,
} from "./durable-object-storage.js";
export {
  fromPg,
  isPgClient,
  isPgPool,
  type PgClientLike,
  type PgPoolClientLike,
  type PgPoolLike,
  type PgQueryResult,
} from "./pg.js";
export { statementText } from "./placeholders.js";
export {
  fromPostgresJs,
  isPostgresJs,
  type PostgresJsRows,
  type PostgresJsSql,
  type PostgresJsSqlLike,
} from "./postgres-js.js";
export { maxRowBytes, rowBytesOver, rowTooLarge, utf8Bytes } from "./row-bytes.js";
export { buildStatement, isSqlStatement, join, raw, type SqlTemplateValue, sql } from "./statement.js";
export { fromTaggedTemplate, type TaggedTemplateSqlSource } from "./tagged-template.js";
export { isMissingTableError } from "./text.js";
export {
  type DurableObjectStateLike,
  isBetterSqlite3Database,
  isDurableObjectState,
  isDurableObjectStorage,
  isSqlClient,
  isTaggedTemplateSource,
  type SqlSource,
  toSqlClient,
} from "./to-sql-client.js";
export type {
  SqlClient,
  SqlClientOptions,
  SqlDialect,
  SqlRow,
  SqlStatement,
  SqlValue,
  StatementObserver,
  StatementReport,
} from "./types.js";
