import { setTimeout } from "node:timers/promises";

/** One page of `list`: pass `cursor` back until `list_complete` is true. */
export type KeyValueListPage =
  | { keys: { name: string }[]; list_complete: true }
  | { keys: { name: string }[]; list_complete: false; cursor: string };

/**
 * The part of a key-value database the session store uses: the four calls of Cloudflare Workers KV's
 * `KVNamespace`, values as strings. Nothing here is atomic across calls and there is no compare-and-set:
 * two writers that read, decide and write can both decide on the same old state.
 */
export interface KeyValueNamespace {
  /** The value, or `null` when the key is absent. */
  get(key: string): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
  /** The keys that start with `prefix`, in byte order, one page at a time. */
  list(options: { prefix: string; cursor?: string }): Promise<KeyValueListPage>;
  /** Deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
}

/**
 * A key-value namespace in memory with real network-like latency: every call waits a random 0–2 ms before
 * and after it touches the data, so calls started together finish in any order and interleave, as requests
 * to a remote database do. `pageSize` is how many keys a `list` page holds (Cloudflare's: 1,000).
 */
export class InMemoryKeyValueNamespace implements KeyValueNamespace {
  readonly #values = new Map<string, string>();
  readonly #pageSize: number;

  constructor(options: { pageSize?: number } = {}) {
    this.#pageSize = options.pageSize ?? 1_000;
  }

  async get(key: string): Promise<string | null> {
    return this.#call(() => this.#values.get(key) ?? null);
  }

  async put(key: string, value: string): Promise<void> {
    if (typeof value !== "string") throw new TypeError(`put ${key}: values are strings`);
    return this.#call(() => void this.#values.set(key, value));
  }

  async list(options: { prefix: string; cursor?: string }): Promise<KeyValueListPage> {
    return this.#call(() => {
      // The cursor is the last key of the page before: the next page starts after it.
      const names = [...this.#values.keys()]
        .filter((name) => name.startsWith(options.prefix))
        .filter((name) => options.cursor === undefined || name > options.cursor)
        .sort();
      const keys = names.slice(0, this.#pageSize).map((name) => ({ name }));
      const last = keys.at(-1);
      return names.length <= this.#pageSize || last === undefined
        ? { keys, list_complete: true }
        : { keys, list_complete: false, cursor: last.name };
    });
  }

  async delete(key: string): Promise<void> {
    return this.#call(() => void this.#values.delete(key));
  }

  async #call<T>(touch: () => T): Promise<T> {
    await setTimeout(Math.random() * 2);
    const result = touch();
    await setTimeout(Math.random() * 2);
    return result;
  }
}

/** Every key that starts with `prefix`, in byte order, page after page. */
export async function listKeys(namespace: KeyValueNamespace, prefix: string): Promise<string[]> {
  const names: string[] = [];
  for (let cursor: string | undefined, done = false; !done; ) {
    const page = await namespace.list(cursor === undefined ? { prefix } : { prefix, cursor });
    names.push(...page.keys.map((key) => key.name));
    [done, cursor] = page.list_complete ? [true, undefined] : [false, page.cursor];
  }
  return names;
}
