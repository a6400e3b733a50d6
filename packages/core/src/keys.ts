/**
 * Keys of keyed entries (search and skill blocks) written by the model through `set_context`.
 *
 * - With a title: titles are compared after trimming, collapsing whitespace and lower-casing. A title of at
 *   most 60 characters made of plain words (`a-z`, `0-9`) separated by single spaces becomes its slug
 *   (`Breakfast notes` → `breakfast-notes`, as agents/context writes it); that mapping is one-to-one because
 *   its dashes can only come from spaces. Any other title (punctuation, dashes, other scripts, longer) becomes
 *   its slug, `--`, and a 53-bit hash of the title (`C++` → `c--…`, `C#` → `c--…`, different;
 *   `follow-up` → `follow-up--…`, not `follow up`'s `follow-up`). Plain slugs never contain `--`, so the two
 *   forms never meet.
 * - Without a title: the key derives from the content: slug of its first 60 characters, `-`, and a 32-bit
 *   FNV-1a hash in base 36, the form agents/context uses, so the same content keeps the same key.
 */
export function entryKey(title: string | undefined, content: string): string {
  const normalized = title?.trim().replace(/\s+/g, " ").toLowerCase();
  if (normalized) {
    if (normalized.length <= 60 && /^[a-z0-9]+(?: [a-z0-9]+)*$/.test(normalized)) {
      return normalized.replace(/ /g, "-");
    }
    return `${slugify(normalized) || "entry"}--${hash53(normalized)}`;
  }
  return `${slugify(content.slice(0, 60)) || "entry"}-${fnv1a32(content)}`;
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
}

/** FNV-1a over UTF-16 code units, 32-bit, base 36. */
export function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/** A 53-bit string hash (two mixed 32-bit lanes), base 36: collisions are not a practical concern. */
export function hash53(text: string): string {
  let first = 0xdeadbeef;
  let second = 0x41c6ce57;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    first = Math.imul(first ^ code, 2654435761);
    second = Math.imul(second ^ code, 1597334677);
  }
  first = Math.imul(first ^ (first >>> 16), 2246822507) ^ Math.imul(second ^ (second >>> 13), 3266489909);
  second = Math.imul(second ^ (second >>> 16), 2246822507) ^ Math.imul(first ^ (first >>> 13), 3266489909);
  return (4294967296 * (2097151 & second) + (first >>> 0)).toString(36);
}
