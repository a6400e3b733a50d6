import { ContextError, type SkillProvider } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import type { SkillBucket } from "./bucket.js";
import {
  checkContent,
  checkDescription,
  checkKey,
  checkPrefix,
  DESCRIPTION_FIELD,
  keyProblem,
  oneLine,
} from "./object-key.js";
import { SKILL_CONTENT_TYPE, skillPutOptions } from "./skill-object.js";

/** Options of `R2SkillProvider`, as `agents`' R2SkillProvider takes them. */
export interface R2SkillProviderOptions {
  /** Put before every skill key to make its object name (`"skills/"` → `skills/code-review`). Default none. */
  prefix?: string | undefined;
  /**
   * An allow-list of skill keys (relative to the prefix). Given and non-empty: only these are listed and
   * loaded; a load of any other key answers `null` without fetching. Writes (`set`, `delete`) reach any
   * valid key, as with agents' `R2SkillProvider`.
   */
  keys?: readonly string[] | undefined;
  /**
   * Largest skill object `load` reads, in bytes (default 1 MiB, about 250,000 tokens: more than a model's
   * context holds). A larger object (another tool may upload anything) is refused by its size before its body
   * is read, so it never fills a Worker's 128 MB or a tool result.
   */
  maxSkillBytes?: number | undefined;
  /**
   * The HTTP content type `set` stores on each object (default `text/markdown; charset=utf-8`, so skills open
   * as text in the dashboard and over HTTP); `null` stores none, as Cloudflare agents' R2SkillProvider does.
   */
  contentType?: string | null | undefined;
}

/** Default `maxSkillBytes`: 1 MiB. */
const DEFAULT_MAX_SKILL_BYTES = 1_048_576;

/**
 * A loadable block (skills) in an R2 bucket, a drop-in for `agents/experimental/memory/session`'s
 * R2SkillProvider: one object per skill, named prefix + key, its description in the object's custom
 * metadata (`description`).
 *
 * - `get()` lists `- key: description` (or `- key`) for every object under the prefix, in R2's order
 *   (by name), following the listing cursor page by page (R2 returns at most 1,000 objects a page, fewer
 *   when metadata is included).
 * - `load(key)` is one `get` of the object (one over `maxSkillBytes`, 1 MiB by default, is refused by its
 *   size with a `PROVIDER_FAILED` `ContextError`, its body never read); `set(key, content, description?)` one `put` (plus a `head` to
 *   keep the stored description when none is given); `delete(key)` one `delete`.
 * - Keys that are not valid object names (empty, a control character or line break, a lone surrogate,
 *   more than 1,024 UTF-8 bytes with the prefix) are refused with an `INVALID_INPUT` `ContextError`.
 *
 * ```ts
 * new R2SkillProvider(env.SKILLS_BUCKET, { prefix: "skills/", keys: ["code-review", "debugging"] });
 * ```
 */
export class R2SkillProvider implements SkillProvider {
  readonly #bucket: SkillBucket;
  readonly #prefix: string;
  readonly #keys: ReadonlySet<string> | null;
  readonly #maxSkillBytes: number;
  readonly #contentType: string | null;

  constructor(bucket: SkillBucket, options: R2SkillProviderOptions = {}) {
    if (typeof bucket !== "object" || bucket === null || typeof bucket.list !== "function") {
      throw new ContextError(
        "INVALID_CONFIG",
        `R2SkillProvider: the first argument must be an R2 bucket binding, got ${describeValue(bucket)}`,
      );
    }
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `R2SkillProvider: options must be an object, got ${describeValue(options)}`,
      );
    }
    this.#bucket = bucket;
    this.#prefix = checkPrefix(options.prefix);
    this.#keys = allowList(options.keys, this.#prefix);
    const maxSkillBytes = options.maxSkillBytes ?? DEFAULT_MAX_SKILL_BYTES;
    if (!Number.isSafeInteger(maxSkillBytes) || maxSkillBytes < 1) {
      throw new ContextError(
        "INVALID_CONFIG",
        `R2SkillProvider: maxSkillBytes must be a positive whole number of bytes, got ${describeValue(maxSkillBytes)}`,
      );
    }
    this.#maxSkillBytes = maxSkillBytes;
    const contentType = options.contentType === undefined ? SKILL_CONTENT_TYPE : options.contentType;
    if (contentType !== null && (typeof contentType !== "string" || contentType.trim() === "")) {
      throw new ContextError(
        "INVALID_CONFIG",
        `R2SkillProvider: contentType must be a non-empty string or null, got ${describeValue(contentType)}`,
      );
    }
    if (contentType !== null) checkContentType(contentType);
    this.#contentType = contentType;
  }

  /** The prefix of every object name. */
  get prefix(): string {
    return this.#prefix;
  }

  /** The allow-list, or `null` when every key under the prefix is a skill. */
  get keys(): readonly string[] | null {
    return this.#keys === null ? null : [...this.#keys];
  }

  /**
   * Every skill's `- key: description` line, in object-name order, or `null` when there are none. One list
   * call per page of objects under the prefix; no object is read. Objects whose names are not usable skill
   * keys (a line break, for example, written by another tool) are left out of the listing.
   */
  async get(): Promise<string | null> {
    const lines: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#bucket.list({
        prefix: this.#prefix,
        // R2's largest page; with metadata included a page may still hold fewer, so follow the cursor.
        limit: 1_000,
        include: ["customMetadata"],
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const object of page.objects) {
        const key = object.key.slice(this.#prefix.length);
        if (!this.#allows(key) || keyProblem(key, this.#prefix) !== null) continue;
        const description = oneLine(object.customMetadata?.[DESCRIPTION_FIELD] ?? "");
        lines.push(description === "" ? `- ${key}` : `- ${key}: ${description}`);
      }
      cursor = page.truncated ? page.cursor : undefined;
      if (page.truncated && cursor === undefined) {
        throw new ContextError(
          "PROVIDER_FAILED",
          "R2SkillProvider: a truncated listing came without a cursor",
        );
      }
    } while (cursor !== undefined);
    return lines.length === 0 ? null : lines.join("\n");
  }

  /** The skill's full text, or `null` when there is no such object (or the key is not allowed: no fetch). */
  async load(key: string): Promise<string | null> {
    checkKey(key, this.#prefix, "R2SkillProvider.load");
    if (!this.#allows(key)) return null;
    const object = await this.#bucket.get(this.#prefix + key);
    if (object === null) return null;
    if (typeof object.size === "number" && object.size > this.#maxSkillBytes) {
      throw new ContextError(
        "PROVIDER_FAILED",
        `R2SkillProvider.load: skill "${clipped(key)}" is ${object.size.toLocaleString("en-US")} bytes; the most a load reads is ${this.#maxSkillBytes.toLocaleString("en-US")} (maxSkillBytes): split it into smaller skills`,
      );
    }
    return object.text();
  }

  /**
   * Writes a skill's object. Without a description the stored one is kept (one `head` first); an empty
   * description removes it. `keys` filters reading only: a key outside it is written (as agents'
   * `R2SkillProvider` does) and stays unlisted. Refused: invalid keys, non-text content, lone surrogates,
   * and descriptions with line breaks or over 4,096 bytes.
   */
  async set(key: string, content: string, description?: string): Promise<void> {
    checkKey(key, this.#prefix, "R2SkillProvider.set");
    checkContent(content, key, "R2SkillProvider.set");
    let kept = checkDescription(description, key, "R2SkillProvider.set");
    if (kept === undefined) {
      const stored = await this.#bucket.head(this.#prefix + key);
      kept = stored?.customMetadata?.[DESCRIPTION_FIELD];
    }
    await this.#bucket.put(this.#prefix + key, content, skillPutOptions(kept, this.#contentType));
  }

  /** Deletes a skill's object; an unknown key is a no-op. */
  async delete(key: string): Promise<void> {
    checkKey(key, this.#prefix, "R2SkillProvider.delete");
    await this.#bucket.delete(this.#prefix + key);
  }

  #allows(key: string): boolean {
    return this.#keys === null || this.#keys.has(key);
  }
}

function allowList(keys: unknown, prefix: string): ReadonlySet<string> | null {
  if (keys === undefined) return null;
  if (!Array.isArray(keys)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `R2SkillProvider: keys must be an array of skill keys, got ${describeValue(keys)}`,
    );
  }
  for (const key of keys) {
    const problem = keyProblem(key, prefix);
    if (problem !== null) throw new ContextError("INVALID_CONFIG", `R2SkillProvider: in keys, ${problem}`);
  }
  // An empty list means no filter, as in agents' R2SkillProvider.
  return keys.length === 0 ? null : new Set(keys as string[]);
}

/** The longest `contentType` taken: a media type's names are 127 characters at most (RFC 6838). */
const MAXIMUM_CONTENT_TYPE_LENGTH = 1024;

/**
 * Refuses a `contentType` that is not a header value R2 can give back as it was: printable ASCII, no line
 * break or other control character, no space at either end. `writeHttpMetadata` copies the stored type into
 * a response's headers unchecked, so a line break would start a header of its own; a lone surrogate was
 * stored as U+FFFD.
 */
function checkContentType(contentType: string): void {
  if (contentType.length > MAXIMUM_CONTENT_TYPE_LENGTH) {
    throw new ContextError(
      "INVALID_CONFIG",
      `R2SkillProvider: contentType is ${contentType.length} characters; the limit is ${MAXIMUM_CONTENT_TYPE_LENGTH}`,
    );
  }
  const bad = /[^\x20-\x7e]|^ | $/.exec(contentType);
  if (bad !== null) {
    const code = (bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    throw new ContextError(
      "INVALID_CONFIG",
      `R2SkillProvider: contentType must be printable ASCII without a space at either end (an HTTP header value), got ${clipped(JSON.stringify(contentType))}: U+${code} at index ${bad.index}`,
    );
  }
}
