import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { StoredCompaction } from "@contextblocks/sessions";
import type {
  AppendPlacement,
  AppendResult,
  IdHolder,
  MessageRecord,
  SearchRanking,
  SessionStoreV1,
  StoredSearchHit,
} from "@contextblocks/sessions/store-kit";
import { searchRankingOf } from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlStatement, type StatementObserver, sql } from "@contextblocks/sql";
import {
  checkStorable as checkText,
  ensureTable,
  isMissingTable,
  TableAccess,
  unstorable,
} from "@contextblocks/sql-stores";
import { searchableText } from "@contextblocks/text";
import { type AppendRow, appendStatement } from "./append-statement.js";
import { type PostgresSource, postgresClient } from "./client.js";
import { leafStatement, newestChildlessStatement } from "./latest-leaf.js";
import { candidateOf, searchMessageRows } from "./message-search.js";
import { searchFieldsOf, storedSearchDay } from "./message-search-fields.js";
import { refreshContextStatement } from "./message-search-statement.js";
import { defaultPostgresSearchRanking } from "./postgres-search-ranking.js";
import { SESSION_TABLES } from "./schema.js";
import { sessionTablesReady } from "./session-tables-ready.js";
import { indexableText } from "./text-checks.js";
import { timeText } from "./time-text.js";

const PROVIDER = "PostgresSessionStore";

/** Options of `PostgresSessionStore`. */
export interface PostgresSessionStoreOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Create the tables on first use when they are missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * The weights of `search`'s ranking over `defaultPostgresSearchRanking` (`defaultSearchRanking` of
   * `@contextblocks/sessions/store-kit` with a deeper candidate pool), for
   * a benchmark choosing them on conversations of its own. Most applications leave it out.
   */
  searchRanking?: Partial<SearchRanking> | undefined;
}

/**
 * How many times an append runs its statement when other writers kept committing between its start and its
 * lock (each run waits for the writer ahead of it, so one of any number of racing appends stores per round).
 */
const appendAttempts = 100;

/** SQLSTATEs after which the append statement stored nothing and is run again: a unique violation, a deadlock. */
const retriedStates = new Set(["23505", "40P01"]);

interface RecordRow {
  id: string;
  parent_id: string | null;
  role: string;
  created_at: unknown;
  tokens: number | null;
  bytes: string | number | null;
  content?: string | null;
}

/** The columns a record is read from (`content` only when asked). */
function recordColumns(content: boolean): SqlStatement {
  return content
    ? sql`id, parent_id, role, created_at, tokens, octet_length(content) AS bytes, content`
    : sql`id, parent_id, role, created_at, tokens, octet_length(content) AS bytes`;
}

/**
 * A session's messages in Postgres, on the storage contract `SessionStoreV1` of `@contextblocks/sessions`:
 * records and the answers only storage can give atomically, nothing more. A `Session` reads it through the
 * message tree (`new MessageTree(store)`, or `postgresBackend(...).messages(id)`), which applies every rule.
 *
 * The tables are those of Cloudflare agents' Sessions API (`assistant_messages`, `assistant_compactions`),
 * plus a `position` column and the `assistant_leaves` pointer row per session (see `POSTGRES_SCHEMA`):
 *
 * - An append is ONE statement, one round trip, whatever the chain's length (append-statement.ts says why
 *   its writes never rest on a stale read).
 * - A path read is one recursive statement that walks `parent_id` up from the leaf by primary key: its cost
 *   grows with the path, never with the session.
 * - Search is Postgres full-text over `content_tsv` (GIN), with the shared query planning.
 */
export class PostgresSessionStore implements SessionStoreV1 {
  readonly specificationVersion = "v1";
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #ranking: SearchRanking;
  readonly #access: TableAccess;

  constructor(source: PostgresSource, sessionIdOrOptions?: string | PostgresSessionStoreOptions) {
    const options: PostgresSessionStoreOptions =
      typeof sessionIdOrOptions === "string" ? { sessionId: sessionIdOrOptions } : (sessionIdOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw invalidConfig(
        `the second argument must be a session id or an options object, got ${describeValue(options)}`,
      );
    }
    const { sessionId = "", createTables = true } = options;
    if (typeof sessionId !== "string") {
      throw invalidConfig(`the session id must be a string, got ${describeValue(sessionId)}`);
    }
    checkText(sessionId, "session id", PROVIDER, "postgres", "INVALID_CONFIG", undefined);
    if (typeof createTables !== "boolean") {
      throw invalidConfig(`createTables must be a boolean, got ${describeValue(createTables)}`);
    }
    this.#client = postgresClient(source, options.onStatement, PROVIDER);
    this.#sessionId = sessionId;
    this.#ranking = searchRankingOf(
      options.searchRanking,
      "PostgresSessionStore",
      defaultPostgresSearchRanking,
    );
    this.#access = new TableAccess(this.#client, SESSION_TABLES, createTables, PROVIDER);
  }

  /** The session this store reads and writes. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The client, for context blocks on the same database. */
  get client(): SqlClient {
    return this.#client;
  }

  async readPath(
    leafId: string | undefined,
    options: { limit: number; content: boolean },
  ): Promise<MessageRecord[]> {
    const limit = Math.floor(options.limit);
    if (!(limit > 0) || (leafId !== undefined && !storableId(leafId))) return [];
    const session = this.#sessionId;
    // Each step is a `LATERAL … LIMIT 1` lookup by primary key: the fence keeps the planner from joining the
    // whole session per step when a new table's statistics are not gathered yet (that plan is quadratic).
    const step = (from: SqlStatement) => sql`SELECT ${recordColumns(options.content)}
    FROM assistant_messages WHERE session_id = ${session} AND id = ${from} LIMIT 1`;
    const columns = sql`m.id, m.parent_id, m.role, m.created_at, m.tokens, m.bytes, ${
      options.content ? sql`m.content` : sql`NULL::text`
    }`;
    const rows = await this.#read<
      RecordRow & { step: number }
    >(sql`WITH RECURSIVE ${leafStatement(session, leafId)},
path (id, parent_id, role, created_at, tokens, bytes, content, step) AS (
  SELECT ${columns}, 0 FROM leaf CROSS JOIN LATERAL (${step(sql`leaf.id`)}) m
  UNION ALL
  SELECT ${columns}, p.step + 1 FROM path p CROSS JOIN LATERAL (${step(sql`p.parent_id`)}) m
  WHERE p.step + 1 < ${limit}::int
)
SELECT id, parent_id, role, created_at, tokens, bytes, content FROM path ORDER BY step`);
    // Leaf first; a record seen before ends the walk (a parent link that loops).
    const seen = new Set<string>();
    const path: MessageRecord[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) break;
      seen.add(row.id);
      path.push(recordOf(row, options.content));
    }
    return path.reverse();
  }

  async readMessages(ids: readonly string[]): Promise<MessageRecord[]> {
    const wanted = ids.filter(storableId);
    if (wanted.length === 0) return [];
    const rows = await this.#read<RecordRow>(sql`SELECT ${recordColumns(true)} FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND id IN (SELECT json_array_elements_text(${JSON.stringify(wanted)}::text::json))`);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const found: MessageRecord[] = [];
    for (const id of ids) {
      const row = byId.get(id);
      if (row !== undefined) found.push(recordOf(row, true));
    }
    return found;
  }

  async readChildren(parentId: string): Promise<MessageRecord[]> {
    if (!storableId(parentId)) return [];
    const rows = await this.#read<RecordRow>(sql`SELECT ${recordColumns(true)} FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND parent_id = ${parentId} ORDER BY position`);
    return rows.map((row) => recordOf(row, true));
  }

  async readTree(limit: number): Promise<MessageRecord[]> {
    const count = Math.floor(limit);
    if (!(count > 0)) return [];
    const rows = await this.#read<RecordRow>(sql`SELECT ${recordColumns(false)} FROM assistant_messages
WHERE session_id = ${this.#sessionId} ORDER BY position LIMIT ${count}::bigint`);
    return rows.map((row) => recordOf(row, false));
  }

  async append(records: readonly MessageRecord[], placement: AppendPlacement): Promise<AppendResult> {
    const rows = records.map(appendRowOf);
    const { parentId } = placement;
    if (typeof parentId === "string" && !storableId(parentId)) return { status: "parent-missing", parentId };
    if (rows.length === 0) return { status: "appended", parentId: parentId ?? null };
    // An id Postgres cannot hold is never the latest leaf: "" names no message, so the check fails.
    const expected = placement.expectedLeafId;
    const expectedLeafId = typeof expected === "string" && !storableId(expected) ? "" : expected;
    const statement = appendStatement(this.#sessionId, rows, { parentId, expectedLeafId });
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      let answer: AppendAnswer | undefined;
      try {
        const [rows = []] = await this.#write([statement]);
        answer = rows[0] as AppendAnswer | undefined;
      } catch (error) {
        if (!retriedStates.has(sqlState(error) as string)) throw error;
        continue;
      }
      const result = resultOf(answer, records, parentId);
      if (result !== null) return result;
    }
    throw new ContextError(
      "PROVIDER_FAILED",
      `${PROVIDER}: message "${rows[0]?.id}" was not stored: other writers of the session kept committing while its append ran (${appendAttempts} attempts)`,
    );
  }

  async update(record: MessageRecord): Promise<boolean> {
    if (!storableId(record.id)) return false;
    checkText(record.role, "role", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    const content = record.content ?? "";
    checkText(content, `content of message "${record.id}"`, PROVIDER, "postgres", "INVALID_INPUT", undefined);
    const ids = JSON.stringify([record.id]);
    const text = searchableText(indexableText(record.text ?? ""));
    // Its speaker and day are derived again from the new text (`created_at` stays), in the same statement.
    const { speaker, time } = searchFieldsOf(record.role, content, text);
    const day = storedSearchDay(sql`${time}::text`, sql`created_at`);
    // Its children and grandchildren carry its text as search context: read again in the same transaction.
    const [, updated = []] = await this.#transaction("lock", [
      sql`UPDATE assistant_messages
SET content = ${content}, role = ${record.role}, text_content = ${text}, tokens = ${record.tokens ?? null}::int,
  speaker = ${speaker}, time_text = ${day.timeText}, search_state = ${day.searchState}
WHERE session_id = ${this.#sessionId} AND id = ${record.id} RETURNING id`,
      refreshContextStatement(this.#sessionId, ids),
    ]);
    return updated.length > 0;
  }

  async delete(ids: readonly string[]): Promise<void> {
    const stored = ids.filter(storableId);
    if (stored.length === 0) return;
    const list = JSON.stringify(stored);
    const session = this.#sessionId;
    await this.#transaction("bump", [
      sql`DELETE FROM assistant_messages
WHERE session_id = ${session} AND id IN (SELECT json_array_elements_text(${list}::text::json))`,
      // The pointer named a deleted message: it moves to the newest childless message (under the lock).
      sql`DELETE FROM assistant_leaves l WHERE l.session_id = ${session} AND NOT EXISTS (
  SELECT 1 FROM assistant_messages m WHERE m.session_id = l.session_id AND m.id = l.leaf_id)`,
      sql`INSERT INTO assistant_leaves (session_id, leaf_id)
SELECT ${session}, newest.id FROM (${newestChildlessStatement(session)}) newest
ON CONFLICT (session_id) DO NOTHING`,
      refreshContextStatement(session, list),
    ]);
  }

  async clear(): Promise<void> {
    const session = this.#sessionId;
    await this.#transaction("bump", [
      sql`DELETE FROM assistant_messages WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_compactions WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_leaves WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_token_calibration WHERE session_id = ${session}`,
    ]);
  }

  async addOverlay(overlay: StoredCompaction): Promise<void> {
    checkText(overlay.summary, "summary", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    checkText(overlay.fromMessageId, "fromMessageId", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    checkText(overlay.toMessageId, "toMessageId", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    checkText(overlay.id, "overlay id", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    await this.#write([
      sql`INSERT INTO assistant_compactions
  (id, session_id, summary, from_message_id, to_message_id, created_at)
VALUES (${overlay.id}, ${this.#sessionId}, ${overlay.summary}, ${overlay.fromMessageId}, ${overlay.toMessageId},
  coalesce(${isoTime(overlay.createdAt)}::timestamptz, now()))`,
    ]);
  }

  async readOverlays(): Promise<StoredCompaction[]> {
    return this.#overlays(sql`ORDER BY created_at, position`);
  }

  async readNewestOverlay(): Promise<StoredCompaction | null> {
    return (await this.#overlays(sql`ORDER BY created_at DESC, position DESC LIMIT 1`))[0] ?? null;
  }

  async #overlays(order: SqlStatement): Promise<StoredCompaction[]> {
    const rows = await this.#read<{
      id: string;
      summary: string;
      from_message_id: string;
      to_message_id: string;
      created_at: unknown;
    }>(sql`SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
WHERE session_id = ${this.#sessionId} ${order}`);
    return rows.map((row) => ({
      id: row.id,
      summary: row.summary,
      fromMessageId: row.from_message_id,
      toMessageId: row.to_message_id,
      createdAt: timeText(row.created_at),
    }));
  }

  async search(query: string, limit: number): Promise<StoredSearchHit[]> {
    const rows = await searchMessageRows(
      (statement) => this.#read(statement),
      query,
      limit,
      this.#sessionId,
      this.#ranking,
    );
    return rows.map((row) => {
      const { sessionId: _sessionId, ...hit } = candidateOf(row);
      return hit;
    });
  }

  async readCalibration(): Promise<number | null> {
    const rows = await this.#read<{ calibration: unknown }>(
      sql`SELECT calibration FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`,
    );
    const value = rows[0] === undefined ? null : Number(rows[0].calibration);
    return value !== null && Number.isFinite(value) && value > 0 ? value : null;
  }

  async writeCalibration(calibration: number): Promise<void> {
    await this.#write([
      sql`INSERT INTO assistant_token_calibration (session_id, calibration) VALUES (${this.#sessionId}, ${calibration})
ON CONFLICT (session_id) DO UPDATE SET calibration = excluded.calibration`,
    ]);
  }

  /**
   * A read: no session tables read as no rows (a read creates nothing). Session tables Cloudflare agents
   * created (without our columns and pointer table) are completed first, then the read runs again.
   */
  async #read<Row>(statement: SqlStatement): Promise<Row[]> {
    await sessionTablesReady(this.#client, this.#access.createTables, PROVIDER, false);
    try {
      return await this.#client.run<Row>(statement);
    } catch (error) {
      if (this.#access.createTables && isMissingTable(error, SESSION_TABLES, "postgres")) {
        const [found] = await this.#client.run<{ present: boolean }>(
          sql`SELECT to_regclass('assistant_messages') IS NOT NULL AS present`,
        );
        if (found?.present === true) {
          await ensureTable(this.#client, SESSION_TABLES);
          return this.#client.run<Row>(statement);
        }
      }
      return this.#access.read(() => Promise.reject(error), []);
    }
  }

  /**
   * `statements` in one transaction that first takes the session's pointer row: `lock` only locks it (an
   * append waits, then goes on); `bump` also writes a new version of it, so an append whose snapshot
   * predates this transaction stores nothing and runs again (append-statement.ts). Creates the tables when
   * they are missing. Answers each statement's rows, the lock's first.
   */
  #transaction(kind: "lock" | "bump", statements: readonly SqlStatement[]): Promise<unknown[][]> {
    const session = this.#sessionId;
    const lock =
      kind === "bump"
        ? sql`UPDATE assistant_leaves SET leaf_id = leaf_id, parent_id = NULL, depth = NULL WHERE session_id = ${session}`
        : sql`SELECT 1 FROM assistant_leaves WHERE session_id = ${session} FOR UPDATE`;
    return this.#write([lock, ...statements]);
  }

  /** `statements` as one group, once the session tables are this release's (created when missing). */
  async #write(statements: readonly SqlStatement[]): Promise<unknown[][]> {
    await sessionTablesReady(this.#client, this.#access.createTables, PROVIDER, true);
    return this.#access.write(statements);
  }
}

/** The one row the append statement answers. */
interface AppendAnswer {
  status: AppendResult["status"];
  stored: number;
  parent_id: string | null;
  leaf_id: string | null;
  clash_index: number | null;
  holder_session_id: string | null;
  holder_parent_id: string | null;
  holder_role: string | null;
  holder_content: string | null;
  holder_created_at: unknown;
  holder_tokens: number | null;
  holder_bytes: string | number | null;
}

/** What the append answered, or `null` when it stored nothing because its snapshot was stale (run it again). */
function resultOf(
  answer: AppendAnswer | undefined,
  records: readonly MessageRecord[],
  parentId: string | null | undefined,
): AppendResult | null {
  switch (answer?.status) {
    case "appended":
      return answer.stored > 0 ? { status: "appended", parentId: answer.parent_id } : null;
    case "stale-leaf":
      return { status: "stale-leaf", leafId: answer.leaf_id };
    case "parent-missing":
      return { status: "parent-missing", parentId: parentId ?? "" };
    case "still-a-parent":
      return { status: "still-a-parent", index: Number(answer.clash_index) };
    case "id-taken": {
      const index = Number(answer.clash_index);
      const holder: IdHolder = {
        id: records[index]?.id ?? "",
        parentId: answer.holder_parent_id,
        role: answer.holder_role ?? "",
        content: answer.holder_content ?? "",
        createdAt: answer.holder_created_at == null ? null : timeText(answer.holder_created_at),
        sessionId: answer.holder_session_id ?? "",
      };
      if (answer.holder_tokens !== null) holder.tokens = answer.holder_tokens;
      if (answer.holder_bytes !== null) holder.bytes = Number(answer.holder_bytes);
      return { status: "id-taken", index, holder };
    }
    default:
      return null;
  }
}

/** A record as the append statement writes it; refuses text Postgres cannot store, naming the field. */
function appendRowOf(record: MessageRecord): AppendRow {
  checkText(record.id, "message id", PROVIDER, "postgres", "INVALID_INPUT", undefined);
  checkText(record.role, "role", PROVIDER, "postgres", "INVALID_INPUT", undefined);
  const content = record.content ?? "";
  checkText(content, `content of message "${record.id}"`, PROVIDER, "postgres", "INVALID_INPUT", undefined);
  // With the words it holds in a compatibility form after it, so the plain word finds them (`searchableText`).
  const text = searchableText(indexableText(record.text ?? ""));
  return {
    id: record.id,
    role: record.role,
    content,
    text,
    tokens: record.tokens ?? null,
    createdAt: isoTime(record.createdAt),
    ...searchFieldsOf(record.role, content, text),
  };
}

/** A record as read: `bytes` and `tokens` when kept, `content` when asked. */
function recordOf(row: RecordRow, content: boolean): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    parentId: row.parent_id,
    role: row.role,
    createdAt: row.created_at === null || row.created_at === undefined ? null : timeText(row.created_at),
  };
  if (row.bytes !== null) record.bytes = Number(row.bytes);
  if (row.tokens !== null) record.tokens = row.tokens;
  if (content) record.content = row.content ?? "";
  return record;
}

/** A time given as text, as Postgres reads it (ISO); anything Date cannot read is left to the default. */
function isoTime(value: string | null | undefined): string | null {
  if (typeof value !== "string") return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function invalidConfig(message: string): ContextError {
  return new ContextError("INVALID_CONFIG", `${PROVIDER}: ${message}`);
}

/** An id Postgres could hold: anything else names no stored message. */
function storableId(id: unknown): id is string {
  return typeof id === "string" && id.length > 0 && unstorable(id, "postgres") === null;
}

function sqlState(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
