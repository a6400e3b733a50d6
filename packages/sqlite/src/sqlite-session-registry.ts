import { ContextError } from "@contextblocks/core";
import type {
  CreateSessionOptions,
  SessionChanges,
  SessionInfo,
  SessionRegistry,
} from "@contextblocks/sessions";
import { type SqlClient, type SqlSource, sql, toSqlClient } from "@contextblocks/sql";
import { kindOf } from "./storage-key.js";

/** The registry table, named and shaped as Cloudflare agents' Sessions API creates it. */
export const sessionsTable = "assistant_sessions";

const now = sql`strftime('%Y-%m-%d %H:%M:%f', 'now')`;

/**
 * The named sessions of one SQLite database (`SessionManager` lists, renames and deletes through it): one
 * row per session in `assistant_sessions`, the table agents uses, created on first use. Every write moves
 * `updated_at`.
 */
export class SqliteSessionRegistry implements SessionRegistry {
  readonly #client: SqlClient;

  constructor(source: SqlSource) {
    this.#client = toSqlClient(source);
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionRegistry needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
  }

  async create(id: string, name: string, options: CreateSessionOptions = {}): Promise<SessionInfo> {
    if (typeof id !== "string" || id.length === 0) {
      throw new ContextError("INVALID_INPUT", `create: the id must be a non-empty string, got ${kindOf(id)}`);
    }
    if (typeof name !== "string") {
      throw new ContextError("INVALID_INPUT", `create: the name must be a string, got ${kindOf(name)}`);
    }
    await this.#ready();
    const rows = await this.#client.run<SessionInfo>(sql`
      INSERT INTO assistant_sessions (id, name, parent_session_id, model, source, created_at, updated_at)
      VALUES (${id}, ${name}, ${options.parentSessionId ?? null}, ${options.model ?? null},
        ${options.source ?? null}, ${now}, ${now})
      ON CONFLICT(id) DO NOTHING
      RETURNING *`);
    if (rows[0] === undefined) throw new ContextError("INVALID_INPUT", `create: a session "${id}" exists`);
    return rows[0];
  }

  async get(id: string): Promise<SessionInfo | null> {
    await this.#ready();
    const rows = await this.#client.query<SessionInfo>`SELECT * FROM assistant_sessions WHERE id = ${id}`;
    return rows[0] ?? null;
  }

  async list(): Promise<SessionInfo[]> {
    await this.#ready();
    return this.#client
      .query<SessionInfo>`SELECT * FROM assistant_sessions ORDER BY updated_at DESC, rowid DESC`;
  }

  async update(id: string, changes: SessionChanges): Promise<void> {
    if (typeof changes !== "object" || changes === null) {
      throw new ContextError(
        "INVALID_INPUT",
        `update: expected { name?, endReason? }, got ${kindOf(changes)}`,
      );
    }
    if (changes.name !== undefined && typeof changes.name !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `update: the name must be a string, got ${kindOf(changes.name)}`,
      );
    }
    await this.#ready();
    const rows = await this.#client.run<{ id: string }>(sql`
      UPDATE assistant_sessions SET
        name = CASE WHEN ${changes.name !== undefined ? 1 : 0} THEN ${changes.name ?? null} ELSE name END,
        end_reason = CASE WHEN ${changes.endReason !== undefined ? 1 : 0} THEN ${changes.endReason ?? null} ELSE end_reason END,
        updated_at = ${now}
      WHERE id = ${id} RETURNING id`);
    if (rows[0] === undefined) throw new ContextError("NOT_FOUND", `update: no session "${id}"`);
  }

  async touch(id: string): Promise<void> {
    await this.#ready();
    await this.#client.run(sql`UPDATE assistant_sessions SET updated_at = ${now} WHERE id = ${id}`);
  }

  async addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): Promise<void> {
    for (const [name, value] of [
      ["inputTokens", inputTokens],
      ["outputTokens", outputTokens],
      ["cost", cost],
    ] as const) {
      if (typeof value !== "number" || !Number.isFinite(value)) {
        throw new ContextError(
          "INVALID_INPUT",
          `addUsage: ${name} must be a finite number, got ${String(value)}`,
        );
      }
    }
    await this.#ready();
    await this.#client.run(sql`UPDATE assistant_sessions SET
      input_tokens = input_tokens + ${inputTokens},
      output_tokens = output_tokens + ${outputTokens},
      estimated_cost = estimated_cost + ${cost},
      updated_at = ${now}
      WHERE id = ${id}`);
  }

  async delete(id: string): Promise<void> {
    await this.#ready();
    await this.#client.run(sql`DELETE FROM assistant_sessions WHERE id = ${id}`);
  }

  #ready(): Promise<void> {
    return registryReady(this.#client);
  }
}

/** One table check per client and process. */
const ready = new WeakMap<SqlClient, Promise<void>>();

export function registryReady(client: SqlClient): Promise<void> {
  let promise = ready.get(client);
  if (promise === undefined) {
    promise = client.query`CREATE TABLE IF NOT EXISTS assistant_sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        parent_session_id TEXT,
        model TEXT,
        source TEXT,
        input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0,
        estimated_cost REAL DEFAULT 0,
        end_reason TEXT,
        created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
        updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
      )`.then(() => undefined);
    promise.catch(() => ready.delete(client));
    ready.set(client, promise);
  }
  return promise;
}
