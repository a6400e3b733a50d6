import { ContextError, describeValue, type SkillProvider } from "@contextblocks/core";
import { type SqlClient, type SqlSource, type StatementObserver, sql, toSqlClient } from "@contextblocks/sql";
import { CREATE_SKILL_TABLE, isMissingSkillTableError } from "./skill-table.js";
import { checkLabel, checkNamespace, checkWellFormed, rowLabel } from "./storage-key.js";

const OWNER = "SqliteSkillProvider";

/** Options of `SqliteSkillProvider` (the object form of its second argument). */
export interface SqliteSkillProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this provider's skills apart from every other namespace's, with `SqliteContextProvider`'s rules. */
  namespace?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A loadable block (skills) in any SQLite database: a Durable Object's `ctx.storage`, an object with a
 * tagged-template `sql` (an `agents` Agent), a better-sqlite3 `Database`, or a `SqlClient`. One row per
 * skill in `contextblocks_skills`, indexed by (block, key).
 *
 * - `get()` lists `- key: description` (or `- key`) in key order: it reads every skill's key and
 *   description (one row each, necessarily), never a skill's content.
 * - `load(key)`, `set(key, content, description?)` and `delete(key)` touch one row whatever the number of
 *   skills. `set` without a description keeps the stored one; an empty description lists the key alone.
 *
 * ```ts
 * new SqliteSkillProvider(ctx.storage, { namespace: "tenant-a" }); // label filled in by the block
 * ```
 */
export class SqliteSkillProvider implements SkillProvider {
  readonly #client: SqlClient;
  readonly #namespace: string | undefined;
  #label: string | undefined;

  constructor(source: SqlSource, labelOrOptions?: string | SqliteSkillProviderOptions) {
    const options: SqliteSkillProviderOptions =
      typeof labelOrOptions === "string" ? { label: labelOrOptions } : (labelOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${OWNER}: the second argument must be a label or an options object, got ${describeValue(options)}`,
      );
    }
    this.#client = toSqlClient(source, { onStatement: options.onStatement });
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `${OWNER} needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
    this.#namespace = checkNamespace(options.namespace, OWNER);
    this.#label = options.label === undefined ? undefined : checkLabel(options.label, this.#namespace, OWNER);
  }

  /** The block's label: given to the constructor, or filled in by `init`. */
  get label(): string | undefined {
    return this.#label;
  }

  /** The namespace this provider's skills live in, if any. */
  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** Called by `ContextBlocks` before first use; fills in the label only when none was given. */
  init(label: string): void {
    if (this.#label === undefined) this.#label = checkLabel(label, this.#namespace, OWNER);
  }

  /** `- key: description` per skill, in key order, or `null` when there are none. One row read per skill. */
  async get(): Promise<string | null> {
    const scope = this.#scope();
    let rows: { key: unknown; description: unknown }[];
    try {
      rows = await this.#client.query<{ key: unknown; description: unknown }>`SELECT key, description
FROM contextblocks_skills WHERE scope = ${scope} ORDER BY key`;
    } catch (error) {
      if (isMissingSkillTableError(error)) return null;
      throw error;
    }
    if (rows.length === 0) return null;
    return rows
      .map(({ key, description }) =>
        typeof description === "string" && description !== "" ? `- ${key}: ${description}` : `- ${key}`,
      )
      .join("\n");
  }

  /** The skill's full content, or `null` for an unknown key. One row read on a hit. */
  async load(key: string): Promise<string | null> {
    const scope = this.#scope();
    this.#checkKey(key, "load");
    let rows: { content: unknown }[];
    try {
      rows = await this.#client.query<{ content: unknown }>`SELECT content FROM contextblocks_skills
WHERE scope = ${scope} AND key = ${key}`;
    } catch (error) {
      if (isMissingSkillTableError(error)) return null;
      throw error;
    }
    const content = rows[0]?.content;
    if (content === undefined || content === null) return null;
    if (typeof content !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `${OWNER}: the stored content of skill "${key}" is ${describeValue(content)}, not text`,
        this.#labelOption(),
      );
    }
    return content;
  }

  /**
   * Adds or replaces a skill (an upsert of its row). Without a description the stored one is kept. Writing
   * what the row already holds writes nothing. Refuses a key with control characters or line breaks, a
   * description with line breaks (each skill is one line of the listing), and lone surrogates anywhere.
   */
  async set(key: string, content: string, description?: string): Promise<void> {
    const scope = this.#scope();
    this.#checkKey(key, "set");
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${OWNER}.set: the content of skill "${key}" must be a string, got ${describeValue(content)}`,
        this.#labelOption(),
      );
    }
    checkWellFormed(content, `content of skill "${key}"`, "INVALID_INPUT", this.#label, OWNER);
    const kept = this.#checkDescription(key, description);
    const upsert = sql`INSERT INTO contextblocks_skills (scope, key, description, content)
VALUES (${scope}, ${key}, ${kept}, ${content})
ON CONFLICT(scope, key) DO UPDATE SET content = excluded.content,
description = COALESCE(excluded.description, description), updated_at = CURRENT_TIMESTAMP
WHERE content IS NOT excluded.content OR description IS NOT COALESCE(excluded.description, description)`;
    try {
      await this.#client.run(upsert);
    } catch (error) {
      if (!isMissingSkillTableError(error)) throw error;
      // First skill in this database: create the table and write, as one group.
      await this.#client.batch([CREATE_SKILL_TABLE, upsert]);
    }
  }

  /** Removes a skill; an unknown key (or no table yet) is a no-op. */
  async delete(key: string): Promise<void> {
    const scope = this.#scope();
    this.#checkKey(key, "delete");
    try {
      await this.#client.query`DELETE FROM contextblocks_skills WHERE scope = ${scope} AND key = ${key}`;
    } catch (error) {
      if (!isMissingSkillTableError(error)) throw error;
    }
  }

  #checkKey(key: unknown, method: string): asserts key is string {
    if (typeof key !== "string" || key.length === 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `${OWNER}.${method}: a skill key must be a non-empty string, got ${describeValue(key)}`,
        this.#labelOption(),
      );
    }
    const control = CONTROL_CHARACTER.exec(key);
    if (control !== null) {
      throw new ContextError(
        "INVALID_INPUT",
        `${OWNER}.${method}: the skill key ${JSON.stringify(key)} has a control character or line break at index ${control.index}; keys are listed one per line`,
        this.#labelOption(),
      );
    }
    checkWellFormed(key, "skill key", "INVALID_INPUT", this.#label, OWNER);
  }

  /** The description to store: `null` keeps the stored one. */
  #checkDescription(key: string, description: unknown): string | null {
    if (description === undefined) return null;
    if (typeof description !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${OWNER}.set: the description of skill "${key}" must be a string or omitted, got ${describeValue(description)}`,
        this.#labelOption(),
      );
    }
    const control = CONTROL_CHARACTER.exec(description);
    if (control !== null) {
      throw new ContextError(
        "INVALID_INPUT",
        `${OWNER}.set: the description of skill "${key}" has a control character or line break at index ${control.index}; it must be one line`,
        this.#labelOption(),
      );
    }
    checkWellFormed(description, `description of skill "${key}"`, "INVALID_INPUT", this.#label, OWNER);
    return description;
  }

  #scope(): string {
    if (this.#label === undefined) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${OWNER} has no label: pass one to the constructor or declare it as a block so init(label) fills it in`,
      );
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #labelOption(): { label: string } | undefined {
    return this.#label === undefined ? undefined : { label: this.#label };
  }
}
