/** Characters of a message's text that go into its search index (a `tsvector` is limited to 1 MB). */
export const maximumIndexedCharacters = 100_000;

/** NUL, or a UTF-16 surrogate without its partner. Linear: one character class per branch. */
const UNINDEXABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The text a message is searched by: at most `maximumIndexedCharacters`, NUL and lone surrogates (also one
 * left by the cut) replaced by U+FFFD, so any message can be stored; its stored content stays exact.
 */
export function indexableText(text: string): string {
  return text.slice(0, maximumIndexedCharacters).replace(UNINDEXABLE, "\ufffd");
}
