import {
  type BlockVersion,
  type BlockWrite,
  ContextError,
  type EntryVersionQuery,
  type SkillProvider,
} from "@contextblocks/core";
import { clipped, describeValue, rowLabel } from "@contextblocks/core/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { toVersion, versionRetention } from "./block-history.js";
import { checkNamespace, checkSqlLabel } from "./names.js";
import { type BlockStoreOptions, blockStoreOptions, ownerOf } from "./provider-options.js";
import { recordSkillVersion, SKILL_HISTORY_TABLE, selectSkillVersions } from "./skill-history.js";
import { ensureTable, SKILLS_TABLE, TableAccess } from "./tables.js";
import { checkRowSize, checkStorable } from "./text-checks.js";

/** Options of `SqlSkillProvider`: those of every block store, and the name its errors begin with. */
export interface SqlSkillProviderOptions extends BlockStoreOptions {
  /** The class name errors begin with (`SqliteSkillProvider`, `PostgresSkillProvider`). */
  owner?: string | undefined;
  /**
   * Entry versions (`versions({ key })`): off by default (a skill store written only by its author needs
   * none). `true` keeps the last 50 versions of each skill, `{ retention }` the last `retention`. A changed
   * write then writes two rows (the skill and its version in `contextblocks_skill_history`) in one group.
   */
  versions?: boolean | { retention?: number } | undefined;
}

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

type VersionRow = Parameters<typeof toVersion>[0];

type Upsert = (scope: string, key: string, description: string | null, content: string) => SqlStatement;

/** Adds or replaces a skill; without a description the stored one is kept; an unchanged row is not written. */
const UPSERT = {
  sqlite: (
    scope,
    key,
    description,
    content,
  ) => sql`INSERT INTO contextblocks_skills (scope, key, description, content)
VALUES (${scope}, ${key}, ${description}, ${content})
ON CONFLICT(scope, key) DO UPDATE SET content = excluded.content,
description = COALESCE(excluded.description, description), updated_at = CURRENT_TIMESTAMP
WHERE content IS NOT excluded.content OR description IS NOT COALESCE(excluded.description, description)`,
  postgres: (
    scope,
    key,
    description,
    content,
  ) => sql`INSERT INTO contextblocks_skills AS skill (scope, key, description, content)
VALUES (${scope}, ${key}, ${description}, ${content})
ON CONFLICT (scope, key) DO UPDATE SET content = excluded.content,
description = COALESCE(excluded.description, skill.description), updated_at = NOW()
WHERE skill.content IS DISTINCT FROM excluded.content
  OR skill.description IS DISTINCT FROM COALESCE(excluded.description, skill.description)`,
} satisfies Record<SqlClient["dialect"], Upsert>;

/**
 * A loadable block (skills) on any `SqlClient`, SQLite or Postgres: one row per skill in
 * `contextblocks_skills`, keyed by (block, key), the block being its row label (with `SqlContextProvider`'s
 * namespace rule).
 *
 * - `get()` lists `- key: description` (or `- key`) in key order: it reads every skill's key and
 *   description, never a skill's content.
 * - `load(key)`, `set(key, content, description?)` and `delete(key)` touch one row whatever the number of
 *   skills. `set` without a description keeps the stored one; an empty description lists the key alone.
 */
export class SqlSkillProvider implements SkillProvider {
  readonly #access: TableAccess;
  readonly #namespace: string | undefined;
  readonly #owner: string;
  readonly #history: TableAccess;
  readonly #retention: number | undefined;
  #label: string | undefined;
  #versionsRead: ((query: EntryVersionQuery) => Promise<BlockVersion[]>) | undefined;

  constructor(client: SqlClient, labelOrOptions?: string | SqlSkillProviderOptions) {
    this.#owner = ownerOf(labelOrOptions, "SqlSkillProvider");
    const options = blockStoreOptions(labelOrOptions, this.#owner);
    const createTables = options.createTables ?? true;
    this.#access = new TableAccess(client, SKILLS_TABLE, createTables, this.#owner);
    this.#history = new TableAccess(client, SKILL_HISTORY_TABLE, createTables, this.#owner);
    this.#retention = options.versions ? versionRetention(options.versions, this.#owner) : undefined;
    this.#namespace = checkNamespace(options.namespace, this.#owner, client.dialect);
    this.#label =
      options.label === undefined
        ? undefined
        : checkSqlLabel(options.label, this.#namespace, this.#owner, client.dialect);
  }

  /**
   * The kept versions of one skill, newest first (`ContextBlocks.entryVersions`); a function only when
   * versions are kept, so `ContextBlocks` and the conformance suite recognise the capability by shape.
   */
  get versions(): ((query: EntryVersionQuery) => Promise<BlockVersion[]>) | undefined {
    if (this.#retention === undefined) return undefined;
    this.#versionsRead ??= (query) => this.#versions(query);
    return this.#versionsRead;
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
    if (this.#label === undefined) {
      this.#label = checkSqlLabel(label, this.#namespace, this.#owner, this.#access.client.dialect);
    }
  }

  /** `- key: description` per skill, in key order, or `null` when there are none. One row read per skill. */
  async get(): Promise<string | null> {
    const scope = this.#scope();
    const client = this.#access.client;
    const rows = await this.#access.read(
      () => client.query<{ key: unknown; description: unknown }>`SELECT key, description
FROM contextblocks_skills WHERE scope = ${scope} ORDER BY key`,
      [],
    );
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
    const client = this.#access.client;
    const rows = await this.#access.read(
      () => client.query<{ content: unknown }>`SELECT content FROM contextblocks_skills
WHERE scope = ${scope} AND key = ${key}`,
      [],
    );
    const content = rows[0]?.content;
    if (content === undefined || content === null) return null;
    if (typeof content !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `${this.#owner}: the stored content of skill "${key}" is ${describeValue(content)}, not text`,
        this.#labelOption(),
      );
    }
    return content;
  }

  /**
   * Adds or replaces a skill (an upsert of its row). Without a description the stored one is kept. Writing
   * what the row already holds writes nothing. Refuses a key with control characters or line breaks, a
   * description with line breaks (each skill is one line of the listing), and text the database would change.
   */
  async set(key: string, content: string, description?: string, write?: BlockWrite): Promise<void> {
    const scope = this.#scope();
    this.#checkKey(key, "set");
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.set: the content of skill "${key}" must be a string, got ${describeValue(content)}`,
        this.#labelOption(),
      );
    }
    const dialect = this.#access.client.dialect;
    checkStorable(content, `content of skill "${key}"`, this.#owner, dialect, "INVALID_INPUT", this.#label);
    const kept = this.#checkDescription(key, description);
    checkRowSize([scope, key, kept ?? "", content], `skill "${clipped(key)}"`, this.#owner, this.#label);
    const upsert = UPSERT[dialect](scope, key, kept, content);
    const retention = this.#retention;
    if (retention === undefined) {
      await this.#access.write([upsert]);
      return;
    }
    // The history table first (once per client): the group below then only ever misses the skills table.
    if (this.#history.createTables) await ensureTable(this.#access.client, SKILL_HISTORY_TABLE);
    try {
      await this.#access.write([
        upsert,
        ...recordSkillVersion(dialect, scope, key, content, write, retention),
      ]);
    } catch (error) {
      // A missing history table (`createTables: false` without schema.sql's part) says so by name.
      if (!(error instanceof ContextError)) this.#history.readFailed(error, undefined);
      throw error;
    }
  }

  async #versions(query: EntryVersionQuery): Promise<BlockVersion[]> {
    const retention = this.#retention ?? 0;
    const scope = this.#scope();
    this.#checkKey(query?.key, "versions");
    const { key, version } = query;
    const limit = Math.min(query.limit ?? retention, retention);
    const client = this.#access.client;
    const rows = await this.#history.read(
      () => client.run<VersionRow>(selectSkillVersions(scope, key, { limit, version })),
      [],
    );
    return rows.map((row) => toVersion(row, this.#owner));
  }

  /** Removes a skill; an unknown key (or no table yet) is a no-op. */
  async delete(key: string): Promise<void> {
    const scope = this.#scope();
    this.#checkKey(key, "delete");
    const client = this.#access.client;
    await this.#access.read(
      () => client.query`DELETE FROM contextblocks_skills WHERE scope = ${scope} AND key = ${key}`,
      [],
    );
  }

  #checkKey(key: unknown, method: string): asserts key is string {
    if (typeof key !== "string" || key.length === 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.${method}: a skill key must be a non-empty string, got ${describeValue(key)}`,
        this.#labelOption(),
      );
    }
    const control = CONTROL_CHARACTER.exec(key);
    if (control !== null) {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.${method}: the skill key ${JSON.stringify(key)} has a control character or line break at index ${control.index}; keys are listed one per line`,
        this.#labelOption(),
      );
    }
    checkStorable(key, "skill key", this.#owner, this.#access.client.dialect, "INVALID_INPUT", this.#label);
  }

  /** The description to store: `null` keeps the stored one. */
  #checkDescription(key: string, description: unknown): string | null {
    if (description === undefined) return null;
    if (typeof description !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.set: the description of skill "${key}" must be a string or omitted, got ${describeValue(description)}`,
        this.#labelOption(),
      );
    }
    const control = CONTROL_CHARACTER.exec(description);
    if (control !== null) {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.set: the description of skill "${key}" has a control character or line break at index ${control.index}; it must be one line`,
        this.#labelOption(),
      );
    }
    const dialect = this.#access.client.dialect;
    checkStorable(
      description,
      `description of skill "${key}"`,
      this.#owner,
      dialect,
      "INVALID_INPUT",
      this.#label,
    );
    return description;
  }

  #scope(): string {
    if (this.#label === undefined) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${this.#owner} has no label: pass one to the constructor or declare it as a block so init(label) fills it in`,
      );
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #labelOption(): { label: string } | undefined {
    return this.#label === undefined ? undefined : { label: this.#label };
  }
}
