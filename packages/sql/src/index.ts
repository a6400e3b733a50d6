// What applications use. Helpers for authors of backends are in `./store-kit`.
export { fromBetterSqlite3 } from "./better-sqlite3.js";
export { fromDurableObjectStorage } from "./durable-object-storage.js";
export { fromPg, type PgOptions, type PgPoolLike } from "./pg.js";
export { fromPostgresJs, type PostgresJsOptions } from "./postgres-js.js";
export { sql } from "./statement.js";
export { fromTaggedTemplate } from "./tagged-template.js";
export { type SqlSource, type SqlSourceOptions, toSqlClient } from "./to-sql-client.js";
export type {
  SqlClient,
  SqlClientOptions,
  SqlRow,
  SqlStatement,
  SqlValue,
  StatementObserver,
  StatementReport,
} from "./types.js";
