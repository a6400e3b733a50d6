import { type ContextBlocks, ContextError, isContextError } from "@contextblocks/core";
import { errorMessage, neutralizeContent, type WriteSource } from "@contextblocks/core/store-kit";
import { inTurn } from "./command-queue.js";
import { checkFilesBlock, MemoryDirectory, type MemoryTarget, missingFile } from "./memory-directory.js";
import { MEMORY_ROOT, type MemoryPath, parseMemoryPath } from "./memory-paths.js";
import { insertAtLine, numberedLines } from "./numbered-lines.js";
import { quotedArgument } from "./quoted-argument.js";

/**
 * The commands of Anthropic's memory tool (`memory_20250818`), as `@ai-sdk/anthropic` 3 and 4 both declare
 * its input.
 */
type MemoryCommand =
  | { command: "view"; path: string; view_range?: [number, number] }
  | { command: "create"; path: string; file_text: string }
  | { command: "str_replace"; path: string; old_str: string; new_str: string }
  | { command: "insert"; path: string; insert_line: number; insert_text: string }
  | { command: "delete"; path: string }
  | { command: "rename"; old_path: string; new_path: string };

/** Options of `memoryTool`. */
interface MemoryToolOptions {
  /**
   * The label of a loadable block whose provider writes and deletes by key (a skill provider): the files
   * Claude creates under `/memories` beside the block files, one entry per file, keyed by the path after
   * `/memories/`. Omitted: only the block files exist, and creating another file is refused.
   */
  files?: string;
  /** The longest text one command may write, in characters. Default 262,144 (as `set_context`). */
  maxFileLength?: number;
}

const DEFAULT_MAX_FILE_LENGTH = 262_144;

/** The file of a block, or of the files block: what `view`, `str_replace` and `insert` work on. */
type FileTarget = Extract<MemoryTarget, { kind: "block" | "file" }>;

/**
 * Storage for Anthropic's memory tool, backed by context blocks: pass its `execute` to
 * `anthropic.tools.memory_20250818({ execute })`. `/memories` lists each writable block as
 * `/memories/<label>.md` (read-only blocks too, which can be viewed but not written) and, with `files`, the
 * files Claude created. Every write goes through `ContextBlocks` with the source `{ kind: "tool", name:
 * "memory" }`, so `maxTokens` holds and a provider that keeps versions keeps one per write (restorable with
 * `restoreBlock` / `restoreEntry`); the frozen prompt does not change, and a `whenChanged: "remind"` block's
 * change reaches the model as a reminder. `execute` never throws: a bad path, an unknown file, a read-only
 * block or a limit exceeded resolve to `Error: …` text, with nothing written. Commands on one context run
 * one at a time, in call order, even when the SDK runs a step's calls at once.
 *
 * The memory tool is an addition: `contextTools(context)` (`set_context`, `edit_context`, …) stays offered
 * beside it unless the caller leaves those tools out.
 */
export function memoryTool(
  context: ContextBlocks,
  options: MemoryToolOptions = {},
): { execute(input: MemoryCommand, options?: { toolCallId?: string }): Promise<string> } {
  const maxFileLength = options.maxFileLength ?? DEFAULT_MAX_FILE_LENGTH;
  if (!Number.isSafeInteger(maxFileLength) || maxFileLength < 1) {
    throw new ContextError(
      "INVALID_CONFIG",
      `memoryTool: maxFileLength must be a positive integer, got ${String(maxFileLength)}`,
    );
  }
  if (options.files !== undefined) {
    checkFilesBlock(
      context.getConfigs().find((config) => config.label === options.files),
      options.files,
    );
  }
  const directory = new MemoryDirectory(context, options.files);
  const commands = new MemoryCommands(directory, maxFileLength);
  return {
    async execute(input, call) {
      try {
        const source: WriteSource = { kind: "tool", name: "memory" };
        if (typeof call?.toolCallId === "string") source.toolCallId = call.toolCallId;
        return await inTurn(context, () => commands.run(input as unknown, source));
      } catch (error) {
        // A provider's own failure is not ours to word: say it failed, and that nothing may have changed.
        return isContextError(error)
          ? `Error: ${error.message}`
          : `Error: the memory store failed (${errorMessage(error)}); try again later.`;
      }
    },
  };
}

/** The six commands over a `MemoryDirectory`: each checks its whole input before it writes anything. */
class MemoryCommands {
  readonly #directory: MemoryDirectory;
  readonly #maxFileLength: number;

  constructor(directory: MemoryDirectory, maxFileLength: number) {
    this.#directory = directory;
    this.#maxFileLength = maxFileLength;
  }

  run(input: unknown, source: WriteSource): Promise<string> {
    const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
    switch (fields.command) {
      case "view":
        return this.#view(parseMemoryPath(fields.path), fields.view_range);
      case "create":
        return this.#create(parseMemoryPath(fields.path), this.#text(fields, "file_text"), source);
      case "str_replace":
        return this.#replace(
          parseMemoryPath(fields.path),
          this.#text(fields, "old_str"),
          this.#text(fields, "new_str"),
          source,
        );
      case "insert":
        return this.#insert(
          parseMemoryPath(fields.path),
          fields.insert_line,
          this.#text(fields, "insert_text"),
          source,
        );
      case "delete":
        return this.#delete(parseMemoryPath(fields.path), source);
      case "rename":
        return this.#rename(
          parseMemoryPath(fields.old_path, "old_path"),
          parseMemoryPath(fields.new_path, "new_path"),
          source,
        );
      default:
        throw new ContextError(
          "INVALID_INPUT",
          `command must be one of view, create, str_replace, insert, delete, rename; got ${quotedArgument(fields.command)}`,
        );
    }
  }

  async #view(path: MemoryPath, range: unknown): Promise<string> {
    const target = await this.#directory.resolve(path);
    if (target.kind === "root") {
      const blocks = this.#directory
        .blockFiles()
        .map((file) => (file.writable ? file.path : `${file.path} (read-only)`));
      const files = (await this.#directory.fileKeys()).map((key) => `${MEMORY_ROOT}/${key}`);
      const lines = [...blocks, ...files];
      return lines.length === 0
        ? `${MEMORY_ROOT} is empty.`
        : `Files in ${MEMORY_ROOT}:\n${lines.join("\n")}`;
    }
    if (target.kind === "directory") {
      return `Files in ${target.path}:\n${target.keys.map((key) => `${MEMORY_ROOT}/${key}`).join("\n")}`;
    }
    if (target.kind === "absent") throw missingFile(target.path);
    const text = await this.#directory.read(target);
    if (range !== undefined && !Array.isArray(range)) {
      throw new ContextError(
        "INVALID_INPUT",
        `view_range must be [first, last], got ${quotedArgument(range)}`,
      );
    }
    if (text === "" && range === undefined) return `${target.path} is empty.`;
    // Each numbered line opens with its number; a line that a `\r` or U+2028 in the text starts (numbering
    // splits at `\n` only) must not open with the prompt's rule, which reads as a section of the prompt.
    return neutralizeContent(`Contents of ${target.path}:\n${numberedLines(text, range)}`);
  }

  async #create(path: MemoryPath, text: string, source: WriteSource): Promise<string> {
    const target = await this.#fileOf(path, "create");
    const file = target.kind === "absent" ? await this.#directory.newFile(target.relative) : target;
    await this.#directory.write(file, text, source);
    return target.kind === "absent" ? `Created ${file.path}.` : `Wrote ${file.path}.`;
  }

  async #replace(path: MemoryPath, oldText: string, newText: string, source: WriteSource) {
    if (oldText.length === 0) {
      throw new ContextError(
        "INVALID_INPUT",
        "old_str is empty; give the exact text to replace (to add lines, use insert). Nothing was changed.",
      );
    }
    const file = await this.#existingFile(path, "str_replace");
    await this.#directory.edit(file, oldText, newText, source);
    return `Edited ${file.path}.`;
  }

  async #insert(path: MemoryPath, line: unknown, text: string, source: WriteSource) {
    const file = await this.#existingFile(path, "insert");
    const current = await this.#directory.read(file);
    const updated = insertAtLine(current, line, text);
    this.#checkLength(updated.length, "the file after the insert");
    if (current === "" && file.kind === "block") {
      // Nothing to anchor an edit on: appended in the block's queue, so a write that landed since the read
      // (set_context in the same step) is kept, with the inserted text after it.
      await this.#directory.appendToBlock(file, updated, source);
    } else if (current === "") await this.#directory.write(file, updated, source);
    else {
      // The whole current text as the one match: the write applies only to the text read above, so a
      // write that landed in between fails the edit instead of being overwritten.
      try {
        await this.#directory.edit(file, current, updated, source);
      } catch (error) {
        if (isContextError(error) && error.code === "NO_MATCH") {
          throw new ContextError("CONFLICT", `${file.path} changed while inserting; view it and try again.`);
        }
        throw error;
      }
    }
    return `Inserted text at line ${String(line)} of ${file.path}.`;
  }

  async #delete(path: MemoryPath, source: WriteSource): Promise<string> {
    const target = await this.#directory.resolve(path);
    switch (target.kind) {
      case "root":
        throw new ContextError(
          "INVALID_INPUT",
          `${MEMORY_ROOT} itself cannot be deleted; delete files in it.`,
        );
      case "absent":
        throw missingFile(target.path);
      case "block":
        // A block is part of the prompt's layout: its file is emptied, never removed.
        await this.#directory.write(target, "", source);
        return `Cleared ${target.path} (a block's file is emptied, not removed).`;
      case "file":
        await this.#directory.remove(target.key, source);
        return `Deleted ${target.path}.`;
      case "directory":
        for (const key of target.keys) await this.#directory.remove(key, source);
        return `Deleted ${target.path} and the ${target.keys.length} file(s) in it.`;
    }
  }

  async #rename(from: MemoryPath, to: MemoryPath, source: WriteSource): Promise<string> {
    const old = await this.#directory.resolve(from);
    if (old.kind !== "file") {
      if (old.kind === "absent") throw missingFile(old.path);
      throw new ContextError(
        "UNSUPPORTED",
        old.kind === "block"
          ? `${old.path} belongs to the block "${old.label}" and keeps its name; create a new file with its text instead. Nothing was changed.`
          : `rename moves one file at a time; ${old.path} is a directory. Nothing was changed.`,
      );
    }
    const target = await this.#directory.resolve(to);
    if (target.kind !== "absent") {
      throw new ContextError(
        "CONFLICT",
        `${target.path} already exists; choose another new_path. Nothing was changed.`,
      );
    }
    const moved = await this.#directory.newFile(target.relative);
    const text = await this.#directory.read(old);
    await this.#directory.write(moved, text, source);
    await this.#directory.remove(old.key, source);
    return `Renamed ${old.path} to ${moved.path}.`;
  }

  /** The target of a write: a writable block's file, an existing file, or an absent one. */
  async #fileOf(path: MemoryPath, command: string) {
    const target = await this.#directory.resolve(path);
    if (target.kind === "root" || target.kind === "directory") {
      throw new ContextError(
        "INVALID_INPUT",
        `${command} needs a file path; ${target.path} is a directory. Nothing was changed.`,
      );
    }
    if (target.kind === "block") this.#directory.requireWritable(target);
    return target;
  }

  async #existingFile(path: MemoryPath, command: string): Promise<FileTarget> {
    const target = await this.#fileOf(path, command);
    if (target.kind === "absent") throw missingFile(target.path);
    return target;
  }

  #text(fields: Record<string, unknown>, name: string): string {
    const value = fields[name];
    if (typeof value !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${name} must be a string, got ${value === undefined ? "nothing" : typeof value}`,
      );
    }
    this.#checkLength(value.length, name);
    return value;
  }

  #checkLength(length: number, what: string): void {
    if (length > this.#maxFileLength) {
      throw new ContextError(
        "MAX_TOKENS",
        `${what} is ${length} characters; the limit is ${this.#maxFileLength}. Nothing was changed.`,
      );
    }
  }
}
