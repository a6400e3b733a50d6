import { ContextError } from "@contextblocks/core";

/** A UTF-16 surrogate without its partner, or a NUL character. Linear: one character class per branch. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Postgres `text` cannot hold NUL, and a lone UTF-16 surrogate has no UTF-8 form (the driver would store
 * U+FFFD instead, silently changing the text). Refuse both with an error that names the field and the index.
 */
export function checkStorable(
  text: string,
  what: string,
  provider: string,
  code: "INVALID_CONFIG" | "INVALID_INPUT",
  label: string | undefined,
): void {
  const match = UNSTORABLE.exec(text);
  if (match === null) return;
  const problem = match[0] === "\u0000" ? "a NUL character" : "a lone UTF-16 surrogate";
  throw new ContextError(
    code,
    `${provider}: the ${what} has ${problem} at index ${match.index}, which Postgres text cannot store unchanged`,
    label === undefined ? undefined : { label },
  );
}

export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length === 0 ? "an empty string" : "a string";
  if (typeof value === "number") return `the number ${value}`;
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Characters of a message's text that go into its search index (a `tsvector` is limited to 1 MB). */
export const maximumIndexedCharacters = 100_000;

const UNINDEXABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The text a message is searched by: at most `maximumIndexedCharacters`, NUL and lone surrogates (also one
 * left by the cut) replaced by U+FFFD, so any message can be stored; its stored content stays exact.
 */
export function indexableText(text: string): string {
  return text.slice(0, maximumIndexedCharacters).replace(UNINDEXABLE, "\ufffd");
}

/** True when Postgres `text` holds `text` unchanged (no NUL, no lone surrogate). */
export function isStorable(text: string): boolean {
  return !UNSTORABLE.test(text);
}
