import { ContextError } from "@contextblocks/core";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { isMissingTableError, isReadOnlyRefusal } from "@contextblocks/sql/store-kit";
import { migrationSteps } from "./session-migration.js";
import { rowsOf, runSteps, runStepsAtOnce, type SqlSteps } from "./sql-steps.js";

/**
 * The tables, named and shaped as `agents/experimental/memory/session` creates them, so a database written
 * by it is read as is. Additions are ours and optional for its rows:
 *
 * - `assistant_messages.depth`: the message's distance from the root (0 for a root), set on append, so the
 *   path length is one indexed read; `NULL` on rows another writer made (then counted along the path once).
 * - `assistant_leaves`: one row per session pointing at its latest leaf, so an append does not search the
 *   session for it.
 * - An index on `assistant_compactions(session_id)`: overlays are read on every history read. On the keyed
 *   layout (which agents@0.22.0 cannot write to) the overlay table is ours instead: keyed by
 *   (`session_id`, `seq`), `WITHOUT ROWID`, one billed row per overlay (session-migration.ts).
 *
 * - `assistant_fts.context`, `.time`, `.speaker`: the text of the turns around the message, its day and its
 *   speaker, searched beside its text and never returned (message-search.ts, message-index-schema.ts); a
 *   table `agents` created lacks them and is searched by text alone.
 * - `assistant_messages.content_chunks`: how many `assistant_message_chunks` rows continue a message too
 *   large for one Durable Object row (`NULL`/0: none; see `message-rows.ts`).
 * - `assistant_fts_state`: the search index's high-water mark; the index is built behind the appends, every
 *   8th append and each search catching up (see `message-index.ts`), so an append writes no search row of its own.
 *
 * - `assistant_messages.parent_seq`: the parent's `rowid`, so a path is walked one row per message (a
 *   rowid seek) instead of an index probe and a row.
 * - `assistant_messages.tokens`: the message's token stamp (`messageTokenStamp`), written with the row;
 *   `path_tokens`: the stamps of its path root..it summed, so the path's estimate is one row
 *   (`getPathTokens`). `NULL` on rows another writer made, and `path_tokens` set back to `NULL` where an
 *   update or a delete above a row changed it (then summed along the path when read).
 * - `assistant_token_calibration`: each session's provider-reported tokens over the estimate
 *   (`Session.reportUsage`), so a new `Session` per request starts calibrated.
 * - `assistant_message_tombstones`: ids deleted while stored messages still named them as their parent
 *   (only on the lean layout, which has no parent index to ask): such an id is refused on append.
 *
 * The FTS row of a message we index has the message's `rowid`, so it is replaced and deleted by rowid
 * instead of a scan (FTS5 cannot index `UNINDEXED` columns).
 *
 * - `contextblocks_schema`: one row (`part = 'sessions'`) with the version of these tables and their layout,
 *   read when a client first opens the database; an older or missing one runs `session-migration.ts`.
 *
 * Three layouts of `assistant_messages` (see `SessionLayout`): a database that has no `assistant_messages`
 * table when a store first opens it gets the keyed or the lean one; a database agents@0.22.0 or an older
 * contextblocks wrote keeps its layout and indexes, and is brought to this release's tables on open (columns
 * and tables added, an old search table rebuilt; no message row is rewritten).
 */
export const messagesTable = "assistant_messages";
export const compactionsTable = "assistant_compactions";
export const searchTable = "assistant_fts";
export const leavesTable = "assistant_leaves";
export const chunksTable = "assistant_message_chunks";
export const searchStateTable = "assistant_fts_state";

export const tombstonesTable = "assistant_message_tombstones";
export const calibrationTable = "assistant_token_calibration";

/**
 * - `"lean"`: `assistant_messages` has only its primary key. The latest leaf is the session's newest row
 *   (children are inserted after their parents, so it has none), kept per client and checked by the append
 *   itself; a path is walked by `parent_seq`. Reading a session's whole tree, a message's branches, or
 *   deleting scans the table.
 * - `"indexed"`: the parent and session indexes of agents@0.22.0's tables and the `assistant_leaves` pointer.
 */
export type SessionLayout = "keyed" | "lean" | "indexed";

/** The layout a store gives a database that has no `assistant_messages` table yet. */
export type NewSessionLayout = "keyed" | "lean";

/**
 * The layout a new database gets unless one is asked for. Keyed where rows are billed (a Durable Object;
 * a client that does not say): an append writes 2 billed rows, search row included. Lean where rows cost
 * only time (better-sqlite3: `billsRows: false`): an append writes no search row of its own; every 8th
 * indexes the 8 before it in one batch (so a search catches up at most that many).
 */
export function defaultNewLayout(client: SqlClient): NewSessionLayout {
  return client.billsRows === false ? "lean" : "keyed";
}

/** The version of the session tables this release writes, kept in `contextblocks_schema` with the layout. */
export const SESSION_SCHEMA_VERSION = 4;

/**
 * The schema marker: one row of `contextblocks_schema` (a primary-key read: 1 row on a Durable Object, where
 * `PRAGMA user_version` is not allowed), with whether agents@0.22.0's parent index is there (a lean database
 * it opened since is indexed now; `pragma_index_info` of a missing index reads nothing).
 */
const markerStatement = sql`SELECT version, layout,
    EXISTS (SELECT 1 FROM pragma_index_info('idx_assistant_msg_parent')) AS parent_index
  FROM contextblocks_schema WHERE part = 'sessions'`;

/**
 * The layout the marker names, or `null` when the tables must be created or brought up to date first.
 * `"indexed since"`: a lean database agents@0.22.0 opened since (its parent index is there), of this release's
 * tables otherwise: it is read as indexed, and the first write's migration names it so in the marker.
 */
function* markedLayout(): SqlSteps<SessionLayout | "indexed since" | null> {
  let rows: { version: unknown; layout: unknown; parent_index: unknown }[];
  try {
    rows = yield* rowsOf(markerStatement);
  } catch (error) {
    // No marker table: a new database, or one an earlier release (or agents) wrote.
    if (isMissingTableError(error, "contextblocks_schema")) return null;
    throw error;
  }
  const row = rows[0];
  if (row === undefined || Number(row.version) < SESSION_SCHEMA_VERSION) return null;
  const layout = row.layout;
  if (layout === "lean" && Number(row.parent_index) === 1) return "indexed since";
  return layout === "keyed" || layout === "lean" || layout === "indexed" ? layout : null;
}

/**
 * The database's layout, its tables brought to this release's schema. When the marker says they are, that
 * is one read; otherwise the migration creates or upgrades them.
 *
 * The migration is imported statically, not with `import()`: under `@cloudflare/vitest-pool-workers` a
 * dynamic import inside a Durable Object's request can stay pending for good (cloudflare/workers-sdk#5387),
 * and an object whose schema check awaits it would stay unavailable, reset or not, until its isolate goes.
 */
export function ensureSchema(
  client: SqlClient,
  newLayout: NewSessionLayout = defaultNewLayout(client),
): Promise<SessionLayout> {
  return runSteps(client, schemaSteps(newLayout));
}

function* schemaSteps(newLayout: NewSessionLayout): SqlSteps<SessionLayout> {
  const marked = yield* markedLayout();
  if (marked !== null && marked !== "indexed since") return marked;
  return yield* madeSteps(newLayout);
}

/** The tables created or brought to this release's shape; refused by name where the database only reads. */
function* madeSteps(newLayout: NewSessionLayout): SqlSteps<SessionLayout> {
  try {
    return yield* migrationSteps(newLayout);
  } catch (error) {
    if (!isReadOnlyRefusal(error)) throw error;
    // Tables this release reads as they are need no write; these must be made first, which a reader cannot do.
    throw new ContextError(
      "READONLY",
      "sessions: this database only reads, and its session tables must first be created or brought to this release's shape (a new database, or one an earlier release or agents@0.22.0 wrote): open it writable once",
      { cause: error },
    );
  }
}

/**
 * The layout a read finds: the marker's, the tables brought up to date as for a write when they are of an
 * earlier shape, or `null` while the database has no session tables at all (a read creates nothing: it finds
 * nothing, as a session with no messages). A database whose marker is current pays the one read it always did.
 */
function* schemaToReadSteps(newLayout: NewSessionLayout): SqlSteps<SessionLayout | null> {
  const marked = yield* markedLayout();
  // The marker's change to indexed is a write's: a read reads the tables as that write leaves them.
  if (marked === "indexed since") return "indexed";
  if (marked !== null) return marked;
  const tables = yield* rowsOf(
    sql`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'assistant_messages'`,
  );
  if (tables.length === 0) return null;
  return yield* madeSteps(newLayout);
}

/** One schema check per client and process: every provider on the same database shares it. */
const ready = new WeakMap<SqlClient, Promise<SessionLayout>>();
/** The layouts those checks found, for work that must answer at once (`schemaToReadAtOnce`). */
const found = new WeakMap<SqlClient, SessionLayout>();

export function schemaReady(client: SqlClient, newLayout?: NewSessionLayout): Promise<SessionLayout> {
  let promise = ready.get(client);
  if (promise === undefined) {
    const checking = ensureSchema(client, newLayout);
    promise = checking;
    checking.then(
      (layout) => {
        if (ready.get(client) === checking) found.set(client, layout);
      },
      () => {
        if (ready.get(client) === checking) ready.delete(client);
      },
    );
    ready.set(client, promise);
  }
  return promise;
}

/**
 * `schemaReady` for a read (`schemaToReadSteps`): `null` while the database has no session tables, an answer not
 * kept (the next write creates them); a layout found is kept as `schemaReady` keeps it.
 */
export async function schemaToRead(
  client: SqlClient,
  newLayout?: NewSessionLayout,
): Promise<SessionLayout | null> {
  const known = ready.get(client);
  if (known !== undefined) return known;
  const layout = await runSteps(client, schemaToReadSteps(newLayout ?? defaultNewLayout(client)));
  if (layout !== null) keep(client, layout);
  return layout;
}

/**
 * `schemaToRead`, answered at once on a client that answers synchronously (`answersAtOnce`): the layout found
 * before, or the same check (and migration) run now. A check still under way elsewhere is not waited for: the
 * migration is safe to run twice (each retries when it finds the other's work).
 */
export function schemaToReadAtOnce(client: SqlClient, newLayout?: NewSessionLayout): SessionLayout | null {
  const known = found.get(client);
  if (known !== undefined) return known;
  const layout = runStepsAtOnce(client, schemaToReadSteps(newLayout ?? defaultNewLayout(client)));
  if (layout !== null) keep(client, layout);
  return layout;
}

/** Keeps a layout found, for `schemaReady` and the reads after it (unless a check is already under way). */
function keep(client: SqlClient, layout: SessionLayout): void {
  if (ready.has(client)) return;
  found.set(client, layout);
  ready.set(client, Promise.resolve(layout));
}

/**
 * True while `assistant_messages` has no parent index, so the lean layout's rules still hold. agents@0.22.0
 * (`agents/experimental/memory/session`) creates that index whenever it opens the database, and its writes
 * keep none of the lean rules (no `parent_seq`, no tombstone for a deleted id that stored messages still
 * name). A lean append puts this in its conditional insert: `pragma_index_info` of an index that does not
 * exist returns no row, so on the lean layout it reads nothing (0 billed rows on a Durable Object).
 */
export const leanLayoutStill: SqlStatement = sql`NOT EXISTS (SELECT 1 FROM pragma_index_info('idx_assistant_msg_parent'))`;

/**
 * Forgets the layout read for this client, so its next use reads it again: after `leanLayoutStill` failed,
 * a database that agents@0.22.0 wrote to is read as indexed from then on, as after a restart.
 */
export function forgetLayout(client: SqlClient): void {
  ready.delete(client);
  found.delete(client);
}
