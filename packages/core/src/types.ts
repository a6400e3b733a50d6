/**
 * The provider contract. Capabilities are structural: a block's behaviour is decided by which methods its
 * provider has (function-valued properties), never by class or brand.
 */

/** Read-only block: `get()` is the block's text, or `null` when it has none. */
export interface ContextProvider {
  get(): Promise<string | null>;
  /** Receives the block's label once, before first use, so one provider class can serve many labels. */
  init?(label: string): void | Promise<void>;
}

/**
 * A provider whose storage can answer a read without waiting (SQLite through better-sqlite3 or a Durable
 * Object's `ctx.storage.sql`). `getSync()` returns what `get()` would resolve to, or `undefined` when it
 * cannot answer now (its storage is asynchronous after all); `ContextBlocks` then awaits `get()`. Reads
 * through `getSync` skip the promises a `get()` makes: a cold start serves the stored prompt in one step.
 */
export interface SyncReadableProvider extends ContextProvider {
  getSync(): string | null | undefined;
}

/** Writable block: the model replaces or appends to it through `set_context`. */
export interface WritableContextProvider extends ContextProvider {
  /** `write` says where the write came from; providers that keep history store it (others may ignore it). */
  set(content: string, write?: BlockWrite): Promise<void>;
}

/** Where a write came from: a tool call (with its id when the framework gives one) or an API method. */
export interface WriteSource {
  kind: "tool" | "api";
  /** The tool (`edit_context`, `set_context`) or method (`setBlock`, `appendToBlock`, `restoreBlock`). */
  name: string;
  toolCallId?: string;
  /** For a restore: the version whose content was written again. */
  restoredFrom?: number;
}

/** What `ContextBlocks` tells a provider about a write. */
export interface BlockWrite {
  source?: WriteSource;
  /**
   * Only on a write of the frozen prompt: the fingerprint of the block configuration it was rendered from.
   * A `FingerprintingPromptStore` keeps it with the prompt (and forgets it on a write without one).
   */
  fingerprint?: string;
}

/** The frozen prompt as a `FingerprintingPromptStore` returns it. */
export interface FingerprintedPrompt {
  content: string;
  /** The fingerprint written with this very content, or `null` when it was written without one. */
  fingerprint: string | null;
}

/**
 * A prompt store that keeps the configuration's fingerprint (`BlockWrite.fingerprint`) with the prompt, so
 * a cold start checks the prompt against the configuration by comparing one string instead of reading every
 * header back. `getWithFingerprint()` answers synchronously when its storage can (as `getSync`), else with a
 * promise; `null` when no prompt is stored. A fingerprint written by another writer, or none, only costs the
 * full check.
 */
export interface FingerprintingPromptStore extends WritableContextProvider {
  getWithFingerprint(): FingerprintedPrompt | null | Promise<FingerprintedPrompt | null>;
}

/**
 * Conditional write (`setIf`): writes `content` only when the stored text is still `expected` (a block with
 * no content counts as `""`), atomically, and resolves `false` without writing otherwise. `ContextBlocks`
 * uses it for edits and appends, so two agents writing one shared block never lose each other's changes.
 */
export interface ConditionalContextProvider extends WritableContextProvider {
  setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean>;
}

/** One version of a block: its content, when and by what it was written. Versions count up from 1. */
export interface BlockVersion {
  version: number;
  content: string;
  /** ISO 8601 time of the write. */
  writtenAt: string;
  source: WriteSource;
}

/** `versions()`'s arguments: at most `limit` versions newest first, or only `version`. */
export interface VersionQuery {
  limit?: number;
  version?: number;
}

/**
 * Block versions (the `versions` capability, recognised by a function-valued `versions`; "history" names
 * messages only): every write that changes the content is a version, stored with the write (in the same
 * transaction where there is one); `versions()` lists the versions kept (bounded retention) newest first. A
 * write of unchanged content adds no version. Versions are never rewritten: a restore is a new version.
 */
export interface VersionedProvider extends WritableContextProvider {
  versions(query?: VersionQuery): Promise<BlockVersion[]>;
}

/**
 * Searchable block: `get()` is a short summary (a count of entries), `search(query)` returns ranked matches
 * as text, or `null` when nothing matches. Keyed entries are written with `set(key, content)`.
 */
export interface SearchProvider extends ContextProvider {
  search(query: string): Promise<string | null>;
  set?(key: string, content: string): Promise<void>;
  delete?(key: string): Promise<void>;
}

/**
 * Loadable block (skills): `get()` lists the entries (key and description), `load(key)` returns one entry's
 * full text, or `null` for an unknown key.
 */
export interface SkillProvider extends ContextProvider {
  load(key: string): Promise<string | null>;
  /** `write` says where the write came from; providers that keep versions store it (others may ignore it). */
  set?(key: string, content: string, description?: string, write?: BlockWrite): Promise<void>;
  delete?(key: string): Promise<void>;
}

/** `versions()`'s arguments for one keyed entry: its key, and at most `limit` versions or only `version`. */
export interface EntryVersionQuery extends VersionQuery {
  key: string;
}

/**
 * Entry versions (the `versions` capability of a loadable block, recognised as for whole blocks by a
 * function-valued `versions` beside `load` and `set`): every `set(key, …)` whose content differs from the
 * entry's newest version is a version of that entry, numbered per key from 1, with the write's source. Deleting an entry keeps its
 * versions (a later `set` of the key counts on), so a deleted entry can be restored. The same rules as
 * `VersionedProvider`: newest first, bounded retention, never rewritten.
 */
export interface VersionedSkillProvider extends SkillProvider {
  set(key: string, content: string, description?: string, write?: BlockWrite): Promise<void>;
  versions(query: EntryVersionQuery): Promise<BlockVersion[]>;
}

export type AnyContextProvider = ContextProvider | WritableContextProvider | SearchProvider | SkillProvider;

/** How a block behaves, decided by its provider's shape. Also its marker in the rendered prompt. */
export type BlockKind = "readonly" | "writable" | "loadable" | "searchable";

/** When a block's value changes after the prompt was frozen: wait for a refresh, or send a reminder. */
export type WhenChanged = "wait" | "remind";

/** One block as declared by the host. */
export interface ContextConfig {
  /** Unique, non-empty; rendered upper-cased in the header and used as the tool argument. */
  label: string;
  /** Shown in the header and in tool descriptions. */
  description?: string;
  /** Token limit, enforced on every write path and shown as usage in the header. */
  maxTokens?: number;
  /** Storage. Omitted: the `defaultProvider` factory supplies one, if given. */
  provider?: AnyContextProvider;
  /** Default `"wait"`. `"remind"`: changes reach the model through `reminder()`. */
  whenChanged?: WhenChanged;
}

/** A block as loaded: its current content and what it can do. */
export interface ContextBlock {
  label: string;
  description?: string;
  content: string;
  /** Estimated tokens of `content` (see `tokenCounter`). */
  tokens: number;
  maxTokens?: number;
  kind: BlockKind;
  whenChanged: WhenChanged;
  /** Accepts writes (whole-block for writable, keyed for searchable and loadable with `set`). */
  writable: boolean;
  isSearchable: boolean;
  isSkill: boolean;
}
