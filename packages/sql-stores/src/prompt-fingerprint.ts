import type { SqlClient, SqlStatement } from "@contextblocks/sql";
import { sql } from "@contextblocks/sql";
import { raw, type SqlDialect } from "@contextblocks/sql/store-kit";
import { BLOCKS_TABLE, ensureTable, type StoreTable } from "./tables.js";

/**
 * The column of `cf_agents_context_blocks` that holds, on the frozen prompt's row, the fingerprint of the
 * block configuration the prompt was rendered from (`BlockWrite.fingerprint`): a wake compares it instead
 * of reading every header of the prompt back. `agents/context` neither reads nor writes it; a prompt it
 * writes keeps the old fingerprint, which then fails core's tie to the prompt's length and ends and costs
 * only the full check (see docs/wake-cost.md). Nullable and added on the first write that carries one.
 */
export const FINGERPRINT_COLUMN = "prompt_fingerprint";

/**
 * The column as a part of the Postgres schema (in `schema.sql` after the blocks table). The column is looked
 * up first (a `DO` block), so the DDL of a database that has it takes no lock on the blocks table. SQLite has
 * no `ADD COLUMN IF NOT EXISTS`: `ensureFingerprintColumn` adds it there.
 */
export const FINGERPRINT_PART: StoreTable = {
  name: `cf_agents_context_blocks.${FINGERPRINT_COLUMN}`,
  missingCodes: ["42P01", "42703"],
  ddl: {
    sqlite: "",
    postgres: `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'cf_agents_context_blocks'::regclass AND attname = '${FINGERPRINT_COLUMN}' AND NOT attisdropped) THEN ALTER TABLE cf_agents_context_blocks ADD COLUMN IF NOT EXISTS ${FINGERPRINT_COLUMN} TEXT; END IF; END $$;
`,
  },
};

/** The template parts of the prompt read with its fingerprint. */
export const SELECT_WITH_FINGERPRINT_PARTS =
  sql`SELECT content, prompt_fingerprint FROM cf_agents_context_blocks WHERE label = ${""}`.strings;

/**
 * The upsert of the prompt's row with its fingerprint (`null`: none). A write that changes neither the
 * content nor the fingerprint writes nothing; a write without one clears the one stored.
 */
export function upsertWithFingerprint(
  dialect: SqlDialect,
  key: string,
  content: string,
  fingerprint: string | null,
): SqlStatement {
  return dialect === "sqlite"
    ? sql`INSERT INTO cf_agents_context_blocks (label, content, prompt_fingerprint) VALUES (${key}, ${content}, ${fingerprint})
ON CONFLICT(label) DO UPDATE SET content = excluded.content, prompt_fingerprint = excluded.prompt_fingerprint,
  updated_at = CURRENT_TIMESTAMP
WHERE content IS NOT excluded.content OR prompt_fingerprint IS NOT excluded.prompt_fingerprint`
    : sql`INSERT INTO cf_agents_context_blocks AS block (label, content, prompt_fingerprint) VALUES (${key}, ${content}, ${fingerprint})
ON CONFLICT (label) DO UPDATE SET content = excluded.content, prompt_fingerprint = excluded.prompt_fingerprint,
  updated_at = NOW()
WHERE block.content IS DISTINCT FROM excluded.content
  OR block.prompt_fingerprint IS DISTINCT FROM excluded.prompt_fingerprint`;
}

/** True when `error` says the fingerprint column is missing (a table created before it existed). */
export function isMissingFingerprintColumn(error: unknown, dialect: SqlDialect): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    if (dialect === "postgres") {
      if ((current as { code?: unknown }).code === "42703") return true;
    } else if (current instanceof Error) {
      const message = current.message.toLowerCase();
      if (message.includes(FINGERPRINT_COLUMN) && /no such column|has no column named/.test(message)) {
        return true;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Adds the fingerprint column to a blocks table created without it (idempotently; the table too when it is
 * missing). Postgres: `FINGERPRINT_PART` behind the schema lock; SQLite: a concurrent connection that added
 * it first ("duplicate column") counts as done.
 */
export async function ensureFingerprintColumn(client: SqlClient): Promise<void> {
  await ensureTable(client, BLOCKS_TABLE);
  if (client.dialect === "postgres") {
    await ensureTable(client, FINGERPRINT_PART);
    return;
  }
  try {
    await client.batch([raw(`ALTER TABLE cf_agents_context_blocks ADD COLUMN ${FINGERPRINT_COLUMN} TEXT`)]);
  } catch (error) {
    if (!(error instanceof Error && /duplicate column/i.test(error.message))) throw error;
  }
}
