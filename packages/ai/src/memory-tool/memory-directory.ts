import { type ContextBlocks, ContextError, type WritableContextProvider } from "@contextblocks/core";
import type { WriteSource } from "@contextblocks/core/store-kit";
import { checkFileNames, MEMORY_ROOT, type MemoryPath } from "./memory-paths.js";

type ResolvedConfig = ReturnType<ContextBlocks["getConfigs"]>[number];
type Relative = Extract<MemoryPath, { kind: "relative" }>;

/** What a path names: a block's file, a file of the files block, a directory, or nothing yet. */
export type MemoryTarget =
  | { kind: "root"; path: string }
  | { kind: "block"; path: string; label: string; writable: boolean }
  | { kind: "file"; path: string; key: string }
  | { kind: "directory"; path: string; keys: string[] }
  | { kind: "absent"; path: string; relative: Relative };

/**
 * `/memories` over a `ContextBlocks`: each writable or read-only block is a file `/memories/<label>.md`;
 * every other path is a file of the keyed block named `files` (its key is the path after `/memories/`),
 * listed, read, written and deleted through `ContextBlocks` so limits, queues, events and versions hold.
 */
export class MemoryDirectory {
  readonly #context: ContextBlocks;
  readonly #files: string | undefined;

  constructor(context: ContextBlocks, files: string | undefined) {
    this.#context = context;
    this.#files = files;
  }

  /** The blocks shown as files: writable and read-only ones (keyed blocks are not files). */
  blockFiles(): Array<{ path: string; label: string; writable: boolean }> {
    return this.#context
      .getConfigs()
      .filter((config) => config.kind === "writable" || config.kind === "readonly")
      .map((config) => ({
        path: `${MEMORY_ROOT}/${config.label}.md`,
        label: config.label,
        writable: config.kind === "writable" && config.writable,
      }));
  }

  /** The keys of the files block, in its listing's order; none without a files block. */
  async fileKeys(): Promise<string[]> {
    if (this.#files === undefined) return [];
    this.filesBlock();
    const listing = (await this.#block(this.#files)).content;
    const keys: string[] = [];
    for (const line of listing.split("\n")) {
      if (!line.startsWith("- ")) continue;
      const entry = line.slice(2);
      const colon = entry.indexOf(": ");
      keys.push(colon === -1 ? entry : entry.slice(0, colon));
    }
    return keys;
  }

  /** What `path` names now; `absent` when it names nothing yet (`create` makes it with `newFile`). */
  async resolve(path: MemoryPath): Promise<MemoryTarget> {
    if (path.kind === "root") return { kind: "root", path: path.path };
    const block = path.directory
      ? undefined
      : this.blockFiles().find((candidate) => candidate.path === path.path);
    if (block !== undefined) return { kind: "block", ...block };
    const keys = await this.fileKeys();
    if (!path.directory && keys.includes(path.relative)) {
      return { kind: "file", path: path.path, key: path.relative };
    }
    const prefix = `${path.relative}/`;
    const inside = keys.filter((key) => key.startsWith(prefix));
    if (inside.length > 0) return { kind: "directory", path: path.path, keys: inside };
    return { kind: "absent", path: path.path, relative: path };
  }

  /**
   * A new file of the files block at `path`: its names checked, the files block present, and no file on the
   * way (`/memories/a.md/b.md` when `a.md` is a file) nor a block's file in its place.
   */
  async newFile(path: Relative): Promise<Extract<MemoryTarget, { kind: "file" }>> {
    if (path.directory) {
      throw new ContextError(
        "INVALID_INPUT",
        `${path.path}/ ends with "/"; give a file path. Nothing was changed.`,
      );
    }
    checkFileNames(path);
    this.filesBlock();
    if (this.blockFiles().some((file) => file.path === path.path)) {
      throw new ContextError(
        "CONFLICT",
        `${path.path} is a block's file; write to it without "/" at the end. Nothing was changed.`,
      );
    }
    const keys = new Set(await this.fileKeys());
    for (let depth = 1; depth < path.segments.length; depth++) {
      const parent = path.segments.slice(0, depth).join("/");
      if (keys.has(parent)) {
        throw new ContextError(
          "CONFLICT",
          `${MEMORY_ROOT}/${parent} is a file, so it cannot hold ${path.path}; choose another path. Nothing was changed.`,
        );
      }
    }
    return { kind: "file", path: path.path, key: path.relative };
  }

  /** The text of a block's file or of an existing file; `NOT_FOUND` for a file that does not exist. */
  async read(target: Extract<MemoryTarget, { kind: "block" | "file" }>): Promise<string> {
    if (target.kind === "block") return (await this.#block(target.label)).content;
    const text = await this.#context.loadEntry(this.filesBlock(), target.key);
    if (text === null) throw missingFile(target.path);
    return text;
  }

  /** Writes a whole file: a block's content, or one entry of the files block. */
  async write(target: Extract<MemoryTarget, { kind: "block" | "file" }>, text: string, source: WriteSource) {
    if (target.kind === "block") {
      this.requireWritable(target);
      await this.#context.setBlock(target.label, text, { source });
    } else {
      await this.#context.setEntry(this.filesBlock(), target.key, text, undefined, { source });
    }
  }

  /**
   * Replaces the one occurrence of `oldText` with `newText`, with `edit_context`'s rules (exactly one match;
   * `NO_MATCH` and `MULTIPLE_MATCHES` otherwise) and under the block's queue, so a concurrent write is not lost.
   */
  async edit(
    target: Extract<MemoryTarget, { kind: "block" | "file" }>,
    oldText: string,
    newText: string,
    source: WriteSource,
  ): Promise<void> {
    if (target.kind === "block") {
      this.requireWritable(target);
      await this.#context.editBlock(target.label, oldText, newText, { source });
    } else {
      await this.#context.editEntry(this.filesBlock(), target.key, oldText, newText, { source });
    }
  }

  /**
   * Adds `text` at the end of a block's file, in the block's queue: a write another tool made since the
   * file was read (`set_context` in the same step) stays before it instead of being overwritten.
   */
  async appendToBlock(target: Extract<MemoryTarget, { kind: "block" }>, text: string, source: WriteSource) {
    this.requireWritable(target);
    await this.#context.appendToBlock(target.label, text, { source });
  }

  /** Removes a file of the files block (its versions stay with its provider). */
  async remove(key: string, source: WriteSource): Promise<void> {
    await this.#context.deleteEntry(this.filesBlock(), key, { source });
  }

  requireWritable(target: Extract<MemoryTarget, { kind: "block" }>): void {
    if (!target.writable) {
      throw new ContextError(
        "READONLY",
        `${target.path} is read-only (the block "${target.label}" cannot be written); nothing was changed. Keep what you need in a file of your own under ${MEMORY_ROOT}.`,
        { label: target.label },
      );
    }
  }

  /** The label of the files block, checked now (blocks can be removed at run time). */
  filesBlock(): string {
    const label = this.#files;
    if (label === undefined) {
      throw new ContextError(
        "UNSUPPORTED",
        `This memory holds only the block files listed in ${MEMORY_ROOT}; it has no place for new files. Write to one of those files instead.`,
      );
    }
    checkFilesBlock(
      this.#context.getConfigs().find((config) => config.label === label),
      label,
    );
    return label;
  }

  async #block(label: string) {
    let block = this.#context.getBlock(label);
    if (block === null) {
      await this.#context.load();
      block = this.#context.getBlock(label);
    }
    if (block === null) throw new ContextError("NOT_FOUND", `Block "${label}" not found`, { label });
    return block;
  }
}

/**
 * The files block is a loadable block whose provider writes and deletes by key (a skill provider such as
 * `InMemorySkillProvider`, `SqliteSkillProvider` or `PostgresSkillProvider`); anything else is refused.
 */
export function checkFilesBlock(config: ResolvedConfig | undefined, label: string): void {
  if (config === undefined) {
    throw new ContextError(
      "INVALID_CONFIG",
      `memoryTool: files names the block "${label}", which is not declared`,
      {
        label,
      },
    );
  }
  const provider = config.provider as Partial<WritableContextProvider> & { delete?: unknown };
  if (
    config.kind !== "loadable" ||
    typeof provider.set !== "function" ||
    typeof provider.delete !== "function"
  ) {
    throw new ContextError(
      "INVALID_CONFIG",
      `memoryTool: the files block "${label}" must be loadable with set and delete (a skill provider), but it is ${config.kind}${config.kind === "loadable" ? " without set or delete" : ""}`,
      { label },
    );
  }
}

/** The error for a path that names nothing. */
export function missingFile(path: string): ContextError {
  return new ContextError("NOT_FOUND", `${path} does not exist. View ${MEMORY_ROOT} to see the files.`);
}
