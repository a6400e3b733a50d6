import { tokenCharacter, tokenize } from "./tokenize.js";

/**
 * The words of a query that Postgres' default text search parser keeps whole: e-mail addresses, host names,
 * URLs, file paths, version numbers and a number hyphened to a word ("john@example.com", "2.5.1", the "-19" of
 * "COVID-19") are lexemes of their own there, where FTS5's `unicode61` (and `planQuery`'s terms) cut them into
 * their letters and digits. A Postgres search asks for each as written beside the terms, so such a query finds
 * the text that holds it.
 */

/** At most this many compounds are read from a query. */
export const maximumCompounds = 8;
/** A longer run of joined words is not asked for whole (its terms still are). */
const longestCompound = 1_024;
/**
 * What joins words into one lexeme for Postgres' parser: `@`, `.`, `/`, `:` and `\` between two of them, and a
 * hyphen before digits ("COVID-19" is 'covid' and '-19' there, a signed number, so "19" alone misses it).
 */
const joined = /[\p{L}\p{N}](?:[@./:\\]+|-(?=\p{N}))[\p{L}\p{N}]/u;

/**
 * The compounds of a query, lower-cased, in order, each once: every whitespace-separated chunk, without the
 * punctuation around it (a path keeps its leading `/`), in which a joining character stands between two words
 * and which holds two words; and for a URL, its host too ("docs.example.com" of "https://docs.example.com/a"),
 * since Postgres' parser keeps a URL's host as a lexeme of its own and a text may hold the host with another
 * path, or the URL followed by punctuation it reads as part of the path.
 */
export function compoundsOf(text: string): string[] {
  const found: string[] = [];
  // Every compound is a piece of the text that holds a join: a text without one (most questions) has none.
  if (!joined.test(text)) return found;
  const add = (candidate: string) => {
    if (found.length >= maximumCompounds || candidate.length > longestCompound) return;
    if (!joined.test(candidate) || tokenize(candidate).length < 2) return;
    const written = candidate.toLowerCase().normalize("NFC");
    if (!found.includes(written)) found.push(written);
  };
  for (const chunk of text.split(/\s+/)) {
    if (found.length >= maximumCompounds) break;
    const core = trimmed(chunk);
    if (core.length === 0) continue;
    add(core);
    const slash = core.indexOf("/", scheme.exec(core)?.[0].length ?? 0);
    if (slash > 0) add(core.slice(scheme.exec(core)?.[0].length ?? 0, slash));
  }
  return found;
}

/** A URL's scheme ("https://"), which Postgres' parser leaves out of its lexemes. */
const scheme = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The chunk without the characters around it that are not word characters ("(see x.com)." → "see x.com"),
 * except the `/` or `~` a path starts with ("/etc/hosts" stays whole: Postgres indexes it so).
 */
function trimmed(chunk: string): string {
  const characters = Array.from(chunk);
  let start = 0;
  let end = characters.length;
  const keptFirst = (character: string, next: string | undefined) =>
    (character === "/" || character === "~") && next !== undefined && tokenCharacter.test(next);
  while (
    start < end &&
    !tokenCharacter.test(characters[start] as string) &&
    !keptFirst(characters[start] as string, characters[start + 1])
  )
    start++;
  while (end > start && !tokenCharacter.test(characters[end - 1] as string)) end--;
  return characters.slice(start, end).join("");
}
