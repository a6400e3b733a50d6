import type { SqlClient } from "@contextblocks/sql";
import {
  BLOCKS_TABLE,
  FINGERPRINT_PART,
  HISTORY_TABLE,
  REGISTRY_TABLE,
  RUN_STATE_TABLE,
  SCHEMA_LOCK,
  SKILL_HISTORY_TABLE,
  SKILLS_TABLE,
  type StoreTable,
  tableStatements,
} from "@contextblocks/sql-stores";
import { foldSearchColumns } from "./folded-words.js";
import { saysWhenExpression } from "./message-search-fields.js";
import { reportUnmigratable } from "./session-migration.js";

/** The version of the session tables this release creates (`contextblocks_schema`, part `sessions`). */
export const SESSION_TABLES_VERSION = 6;

/**
 * `cf_agents_search_entries` (`PostgresSearchProvider`), with a GIN index over the content and one over the
 * words of the key, so a search also finds an entry by its key (a model's `set_context` key is a slug of the
 * entry's title). Both indexes are built with `fastupdate = off`, as the session tables' are: a write puts its
 * entries into the index itself instead of a pending list that every search would scan until a vacuum.
 * Indexes an earlier release created keep Postgres' default (`ALTER INDEX … SET (fastupdate = off)` turns it off).
 * `content_tsv` indexes the content with Latin diacritics taken off (`foldedForIndex`, folded-words.ts), so
 * "cafe" finds "café"; a table created before is rebuilt so when these statements run (`createTables`,
 * schema.sql, or the provider's first write on a client, which finds it so: `foldPending`), in a UTF8
 * database on Postgres 13 or later.
 */
export const SEARCH_TABLE: StoreTable = {
  name: "cf_agents_search_entries",
  ddl: {
    sqlite: "",
    postgres: `CREATE TABLE IF NOT EXISTS cf_agents_search_entries (
  label TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  PRIMARY KEY (label, key)
);

${foldSearchColumns("cf_agents_search_entries", [{ name: "content_tsv", text: "content" }])};

CREATE INDEX IF NOT EXISTS idx_search_entries_fts
  ON cf_agents_search_entries USING GIN (content_tsv) WITH (fastupdate = off);

CREATE INDEX IF NOT EXISTS idx_search_entries_key_fts
  ON cf_agents_search_entries USING GIN (to_tsvector('english', key)) WITH (fastupdate = off);
`,
  },
};

/**
 * The session tables (`PostgresSessionStore`), shaped as Cloudflare agents' Sessions API creates them on
 * Postgres, plus additions that are ours (all additive, so rows `agents` wrote are read as they are):
 * - `assistant_messages.position` (insertion order: branches oldest first, newest leaf), added by
 *   `ALTER … IF NOT EXISTS` to a table `agents` created; `depth` (an earlier release's cached distance from
 *   the root) is no longer written;
 * - `assistant_leaves`, one latest-leaf pointer per session: an append locks and moves it in the same
 *   statement that inserts the chain, and its version tells the append whether its reads still hold
 *   (append-statement.ts); its `parent_id` and `depth` columns are an earlier release's, no longer written;
 * - `context_text` / `context_tsv` (GIN): the text of the message's parent and grandparent on its branch,
 *   searched at a lower weight and never returned (message-search-statement.ts);
 * - `time_text` / `time_tsv` (GIN), `speaker`, `search_state` (partial index on the rows below 2): the
 *   message's day and its speaker, written by its append and its update (message-search-fields.ts), and at
 *   search time for rows an earlier release left without them (message-search-index.ts); the turns after a
 *   message count at query time (an earlier release's `after_text` / `after_tsv` are dropped);
 * - `content_tsv` and `context_tsv` index their text with Latin diacritics taken off (`foldedForIndex`,
 *   folded-words.ts), as SQLite's FTS5 does, so "cafe" finds "Café"; version 5 rebuilds them so on a table
 *   created before (a rewrite of the table, once), in a UTF8 database;
 * - `says_when`, generated: whether the message's text says when (`datePatterns` of `@contextblocks/text`),
 *   which a question that asks when favours; added by the migration to version 3, which rewrites the table;
 * - the three search fields' `tsvector` columns are stored `MAIN` (version 6): kept in the row, where a
 *   search tests them, and moved out of it only when nothing else can make the row fit; a message over about
 *   2 kB otherwise had them moved to the TOAST table first, and a search fetched them from there again for
 *   every term it tested (the texts, which a search does not read, go out of the row instead). Rows written
 *   before keep where they are until they are written again;
 * - the three GIN indexes of the search fields are built with `fastupdate = off` (version 4 turns it off on
 *   older ones and empties their pending lists): an append writes its entries into the index itself, so a
 *   search never reads through a pending list. With it on (Postgres' default), entries wait in a list that
 *   every search scans in full, and that only a vacuum or autovacuum's analyze empties (a manual `ANALYZE`
 *   does not): a session that has just grown by thousands of messages was searched at about twice the cost;
 * - `assistant_messages.tokens`: the message's token stamp, as the message tree computes it (`NULL` on rows
 *   another writer made: estimated from their content); `assistant_token_calibration`: each session's
 *   provider-reported tokens over the estimate (`Session.reportUsage`), so a new `Session` per request
 *   starts calibrated;
 * - `idx_assistant_msg_session_parent` (children of one message in one session, in order),
 *   `idx_assistant_msg_id` (an id in any session: an append refuses an id stored anywhere; UNIQUE, so two
 *   appends of one id to two sessions at once cannot both store it; an earlier release's ordinary index of
 *   that name is replaced, and a table that holds an id twice is reported, not opened: session-migration.ts)
 *   and `assistant_compactions`' primary key (`session_id`, `position`): a session's overlays are one
 *   range of the one index an overlay writes (an earlier release's `id` key and
 *   `idx_assistant_compactions_session` are replaced by it; agents' own inserts, which name no `position`,
 *   still work). `position` is the insertion order: of two overlays stored in the same millisecond, the
 *   later one is newer;
 * - `contextblocks_schema`: the version of these tables (`part = 'sessions'`), written last; a store reads it
 *   once per client and brings older tables up to date (session-tables-ready.ts).
 * A missing column (`42703`: a table `agents` created, before our columns were added) also counts as missing.
 */
export const SESSION_TABLES: StoreTable = {
  name: "assistant_messages",
  missingCodes: ["42P01", "42703"],
  ddl: {
    sqlite: "",
    postgres: `CREATE TABLE IF NOT EXISTS assistant_messages (
  id TEXT NOT NULL,
  session_id TEXT NOT NULL DEFAULT '',
  parent_id TEXT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  text_content TEXT NOT NULL DEFAULT '',
  created_at TIMESTAMPTZ DEFAULT NOW(),
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text_content)) STORED,
  PRIMARY KEY (session_id, id)
);

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS depth INTEGER;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS context_text TEXT NOT NULL DEFAULT '';

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS context_tsv TSVECTOR
  GENERATED ALWAYS AS (to_tsvector('english', context_text)) STORED;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS position BIGINT GENERATED BY DEFAULT AS IDENTITY;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS search_state SMALLINT NOT NULL DEFAULT 0;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS speaker TEXT NOT NULL DEFAULT '';

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS time_text TEXT NOT NULL DEFAULT '';

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS time_tsv TSVECTOR
  GENERATED ALWAYS AS (to_tsvector('english', time_text)) STORED;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS says_when BOOLEAN
  GENERATED ALWAYS AS (${saysWhenExpression}) STORED;

DROP INDEX IF EXISTS idx_assistant_msg_after_fts;

ALTER TABLE assistant_messages DROP COLUMN IF EXISTS after_tsv;

ALTER TABLE assistant_messages DROP COLUMN IF EXISTS after_text;

${foldSearchColumns("assistant_messages", [
  { name: "content_tsv", text: "text_content" },
  { name: "context_tsv", text: "context_text" },
])};

ALTER TABLE assistant_messages ALTER COLUMN content_tsv SET STORAGE MAIN,
  ALTER COLUMN context_tsv SET STORAGE MAIN, ALTER COLUMN time_tsv SET STORAGE MAIN;

CREATE INDEX IF NOT EXISTS idx_assistant_msg_parent
  ON assistant_messages (parent_id);

CREATE INDEX IF NOT EXISTS idx_assistant_msg_session
  ON assistant_messages (session_id);

DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('idx_assistant_msg_id')
  AND NOT indisunique) THEN DROP INDEX idx_assistant_msg_id; END IF; END $$;

CREATE UNIQUE INDEX IF NOT EXISTS idx_assistant_msg_id ON assistant_messages (id);

CREATE INDEX IF NOT EXISTS idx_assistant_msg_fts
  ON assistant_messages USING GIN (content_tsv) WITH (fastupdate = off);

CREATE INDEX IF NOT EXISTS idx_assistant_msg_context_fts
  ON assistant_messages USING GIN (context_tsv) WITH (fastupdate = off);

CREATE INDEX IF NOT EXISTS idx_assistant_msg_time_fts
  ON assistant_messages USING GIN (time_tsv) WITH (fastupdate = off);

DO $$ DECLARE index_name TEXT; BEGIN FOREACH index_name IN ARRAY ARRAY['idx_assistant_msg_fts',
  'idx_assistant_msg_context_fts', 'idx_assistant_msg_time_fts'] LOOP
  IF NOT 'fastupdate=off' = ANY (coalesce((SELECT reloptions FROM pg_class WHERE oid = to_regclass(index_name)), '{}'))
  THEN EXECUTE format('ALTER INDEX %I SET (fastupdate = off)', index_name); PERFORM
    gin_clean_pending_list(to_regclass(index_name)); END IF; END LOOP; END $$;

CREATE INDEX IF NOT EXISTS idx_assistant_msg_search_pending
  ON assistant_messages (session_id, position) WHERE search_state < 2;

CREATE INDEX IF NOT EXISTS idx_assistant_msg_session_parent
  ON assistant_messages (session_id, parent_id, position);

CREATE TABLE IF NOT EXISTS assistant_compactions (
  id TEXT NOT NULL,
  session_id TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL,
  from_message_id TEXT NOT NULL,
  to_message_id TEXT NOT NULL,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  position BIGINT GENERATED BY DEFAULT AS IDENTITY,
  PRIMARY KEY (session_id, position)
);

ALTER TABLE assistant_compactions ADD COLUMN IF NOT EXISTS position BIGINT GENERATED BY DEFAULT AS IDENTITY;

DO $$ DECLARE key_name TEXT; BEGIN SELECT c.conname INTO key_name FROM pg_constraint c
  WHERE c.conrelid = 'assistant_compactions'::regclass AND c.contype = 'p'
    AND (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum)
      IS DISTINCT FROM ARRAY['session_id', 'position']; IF key_name IS NOT NULL THEN
    EXECUTE format('ALTER TABLE assistant_compactions DROP CONSTRAINT %I', key_name); END IF; IF NOT EXISTS (SELECT 1 FROM pg_constraint
    WHERE conrelid = 'assistant_compactions'::regclass AND contype = 'p') THEN
    ALTER TABLE assistant_compactions ADD PRIMARY KEY (session_id, position); END IF; END $$;

DROP INDEX IF EXISTS idx_assistant_compactions_session;

CREATE TABLE IF NOT EXISTS assistant_leaves (
  session_id TEXT PRIMARY KEY,
  leaf_id TEXT NOT NULL
);

ALTER TABLE assistant_leaves ADD COLUMN IF NOT EXISTS parent_id TEXT;

ALTER TABLE assistant_leaves ADD COLUMN IF NOT EXISTS depth INTEGER;

ALTER TABLE assistant_messages ADD COLUMN IF NOT EXISTS tokens INTEGER;

CREATE TABLE IF NOT EXISTS assistant_token_calibration (
  session_id TEXT PRIMARY KEY,
  calibration DOUBLE PRECISION NOT NULL
);

CREATE TABLE IF NOT EXISTS contextblocks_schema (
  part TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);

INSERT INTO contextblocks_schema (part, version) VALUES ('sessions', ${SESSION_TABLES_VERSION})
ON CONFLICT (part) DO UPDATE SET version = GREATEST(contextblocks_schema.version, excluded.version);
`,
  },
};

/** Every part of the schema, each created on its own by the store that uses it. */
export const POSTGRES_TABLES: readonly StoreTable[] = [
  BLOCKS_TABLE,
  FINGERPRINT_PART,
  HISTORY_TABLE,
  SEARCH_TABLE,
  SESSION_TABLES,
  SKILLS_TABLE,
  SKILL_HISTORY_TABLE,
  RUN_STATE_TABLE,
  REGISTRY_TABLE,
];

/**
 * Every table and index the Postgres stores use, in one script (each store creates only its own part on
 * first use). Shipped as `schema.sql` too: run it once where the database user may not create tables at run
 * time, and pass `createTables: false`.
 */
export const POSTGRES_SCHEMA: string = POSTGRES_TABLES.map((table) => table.ddl.postgres).join("\n");

/**
 * Creates every part at once, behind the schema lock, in one transaction; session tables that hold an id
 * twice (which the unique id index cannot be built on) are reported by id and session, nothing changed.
 */
export async function ensureSchema(client: SqlClient): Promise<void> {
  try {
    await client.batch([
      SCHEMA_LOCK,
      ...POSTGRES_TABLES.flatMap((table) => tableStatements(table, "postgres")),
    ]);
  } catch (error) {
    throw await reportUnmigratable(client, "createTables", error);
  }
}
