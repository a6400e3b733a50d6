import { type PostgresSource, postgresClient } from "./client.js";
import { ensureSchema } from "./schema.js";

/**
 * Runs `POSTGRES_SCHEMA` on `source` (idempotent; concurrent callers take turns behind an advisory lock), for
 * a deploy step or a migration script. Each store also creates its own tables on first write unless
 * `createTables: false`.
 */
export function createTables(source: PostgresSource): Promise<void> {
  return ensureSchema(postgresClient(source, undefined, "createTables"));
}
