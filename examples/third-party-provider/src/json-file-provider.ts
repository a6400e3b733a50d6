import { randomUUID } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import type { WritableContextProvider } from "@contextblocks/core";

/** Options for {@link JsonFileContextProvider}. */
export interface JsonFileContextProviderOptions {
  /** The JSON file that holds every block of this store. Created on the first write. */
  path: string;
  /** The block's label. Omit it and `ContextBlocks` supplies it through `init(label)`. */
  label?: string;
}

/** The file's shape: `{ "version": 1, "blocks": { "<label>": "<content>" } }`. */
interface StoreFile {
  version: 1;
  blocks: Record<string, string>;
}

/**
 * Writable context blocks kept in one JSON file per store, one key per label.
 *
 * - A write replaces the file atomically: the new document goes to a temporary file next to it, is flushed
 *   to disk, then renamed over the old one, so a crash leaves the old file or the new one, never half of one.
 * - Writes to one file from this process are queued, so concurrent writes to different labels all land.
 *   Several processes writing one file are not coordinated: give each process its own file.
 * - A missing file is an empty store. A file that is not a store file is an error, never silently replaced.
 */
export class JsonFileContextProvider implements WritableContextProvider {
  readonly path: string;
  #label: string | undefined;

  constructor(options: JsonFileContextProviderOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw new TypeError("JsonFileContextProvider: options.path must be a non-empty string");
    }
    this.path = options.path;
    this.#label = options.label;
  }

  /** Called by `ContextBlocks` with the block's label before first use. An explicit label wins. */
  init(label: string): void {
    this.#label ??= label;
  }

  async get(): Promise<string | null> {
    const blocks = await readBlocks(this.path);
    return blocks.get(this.label()) ?? null;
  }

  async set(content: string): Promise<void> {
    if (typeof content !== "string") {
      throw new TypeError(`JsonFileContextProvider: content must be a string, got ${typeof content}`);
    }
    const label = this.label();
    await updateBlocks(this.path, (blocks) => blocks.set(label, content));
  }

  private label(): string {
    if (this.#label === undefined) {
      throw new Error(
        "JsonFileContextProvider: no label; pass options.label or use the provider in ContextBlocks",
      );
    }
    return this.#label;
  }
}

// Reads and writes of a file, queued per path within this process.
const queues = new Map<string, Promise<unknown>>();

function queued<T>(path: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(path) ?? Promise.resolve();
  const result = previous.then(task, task);
  const tail = result.catch(() => undefined);
  queues.set(path, tail);
  void tail.then(() => {
    if (queues.get(path) === tail) queues.delete(path);
  });
  return result;
}

async function readBlocks(path: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`JsonFileContextProvider: ${path} is not valid JSON (${(error as Error).message})`);
  }
  if (!isStoreFile(parsed)) {
    throw new Error(`JsonFileContextProvider: ${path} is not a context store file (version 1)`);
  }
  // A Map, not the parsed object: labels such as "__proto__" or "constructor" are ordinary keys here.
  return new Map(Object.entries(parsed.blocks));
}

function updateBlocks(path: string, change: (blocks: Map<string, string>) => void): Promise<void> {
  return queued(path, async () => {
    const blocks = await readBlocks(path);
    change(blocks);
    const document: StoreFile = { version: 1, blocks: Object.fromEntries(blocks) };
    await writeAtomically(path, JSON.stringify(document));
  });
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  try {
    const file = await open(temporary, "wx");
    try {
      await file.writeFile(text, "utf8");
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

function isStoreFile(value: unknown): value is StoreFile {
  if (typeof value !== "object" || value === null) return false;
  const { version, blocks } = value as { version?: unknown; blocks?: unknown };
  return (
    version === 1 &&
    typeof blocks === "object" &&
    blocks !== null &&
    !Array.isArray(blocks) &&
    Object.values(blocks).every((content) => typeof content === "string")
  );
}
