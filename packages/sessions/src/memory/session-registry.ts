import { ContextError } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";
import type {
  CreateSessionOptions,
  ListSessionsOptions,
  SessionChanges,
  SessionInfo,
  SessionRegistry,
  SynchronousSessionRegistry,
} from "../session-registry.js";
import { checkListLimit, checkSessionText, checkUsageArguments } from "../store-arguments.js";

/**
 * A `SessionRegistry` in a `Map`: the rows `SessionManager` lists, for tests and quick starts. Rows read
 * back as copies; "most recently updated" is the order of writes, so two writes in one millisecond still
 * list in the order they happened.
 */
export class InMemorySessionRegistry implements SessionRegistry {
  readonly #rows = new Map<string, { info: SessionInfo; written: number }>();
  #writes = 0;

  /** The rows answered at once: the async methods are these, wrapped. */
  readonly synchronous: SynchronousSessionRegistry = {
    create: (id, name, options) => this.#create(id, name, options),
    get: (id) => this.#get(id),
    list: (options) => this.#list(options),
    update: (id, changes) => this.#update(id, changes),
    addUsage: (id, inputTokens, outputTokens, cost) => this.#addUsage(id, inputTokens, outputTokens, cost),
  };

  async create(id: string, name: string, options: CreateSessionOptions = {}): Promise<SessionInfo> {
    return this.#create(id, name, options);
  }

  async get(id: string): Promise<SessionInfo | null> {
    return this.#get(id);
  }

  async list(options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
    return this.#list(options);
  }

  async update(id: string, changes: SessionChanges): Promise<void> {
    this.#update(id, changes);
  }

  async touch(id: string): Promise<void> {
    const row = this.#rows.get(id);
    if (row !== undefined) this.#written(row);
  }

  async addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): Promise<void> {
    this.#addUsage(id, inputTokens, outputTokens, cost);
  }

  async delete(id: string): Promise<void> {
    this.#rows.delete(id);
  }

  #create(id: string, name: string, options: CreateSessionOptions = {}): SessionInfo {
    checkSessionText(id, "id", "create");
    checkSessionText(name, "name", "create", { emptyAllowed: true });
    for (const [what, value] of Object.entries({
      parentSessionId: options.parentSessionId,
      model: options.model,
      source: options.source,
    })) {
      if (value !== undefined && value !== null)
        checkSessionText(value, what, "create", { emptyAllowed: true });
    }
    if (this.#rows.has(id))
      throw new ContextError("INVALID_INPUT", `create: a session "${clipped(id)}" exists`);
    const now = timestamp();
    const info: SessionInfo = {
      id,
      name,
      parent_session_id: options.parentSessionId ?? null,
      model: options.model ?? null,
      source: options.source ?? null,
      input_tokens: 0,
      output_tokens: 0,
      estimated_cost: 0,
      end_reason: null,
      created_at: now,
      updated_at: now,
    };
    this.#rows.set(id, { info, written: this.#writes++ });
    return { ...info };
  }

  #get(id: string): SessionInfo | null {
    const row = this.#rows.get(id);
    return row === undefined ? null : { ...row.info };
  }

  #list(options: ListSessionsOptions = {}): SessionInfo[] {
    const limit = options.limit === undefined ? undefined : checkListLimit(options.limit);
    return [...this.#rows.values()]
      .sort((left, right) => right.written - left.written)
      .slice(0, limit)
      .map((row) => ({ ...row.info }));
  }

  #update(id: string, changes: SessionChanges): void {
    const row = this.#rows.get(id);
    if (row === undefined) throw new ContextError("NOT_FOUND", `update: no session "${clipped(String(id))}"`);
    // Every change is checked before any is made: a refused update changes nothing.
    if (changes.name !== undefined) checkSessionText(changes.name, "name", "update", { emptyAllowed: true });
    if (changes.endReason !== undefined && changes.endReason !== null) {
      checkSessionText(changes.endReason, "endReason", "update", { emptyAllowed: true });
    }
    if (changes.name !== undefined) row.info.name = changes.name;
    if (changes.endReason !== undefined) row.info.end_reason = changes.endReason;
    this.#written(row);
  }

  #addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): void {
    checkUsageArguments(inputTokens, outputTokens, cost);
    const row = this.#rows.get(id);
    if (row === undefined) return;
    row.info.input_tokens += inputTokens;
    row.info.output_tokens += outputTokens;
    row.info.estimated_cost += cost;
    this.#written(row);
  }

  #written(row: { info: SessionInfo; written: number }): void {
    row.info.updated_at = timestamp();
    row.written = this.#writes++;
  }
}

/** The text SQLite's `strftime('%Y-%m-%d %H:%M:%f', 'now')` makes, so rows look alike on every backend. */
function timestamp(): string {
  return new Date().toISOString().replace("T", " ").replace("Z", "");
}
