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

/** Writable block: the model replaces or appends to it through `set_context`. */
export interface WritableContextProvider extends ContextProvider {
  set(content: string): Promise<void>;
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
  set?(key: string, content: string, description?: string): Promise<void>;
  delete?(key: string): Promise<void>;
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
