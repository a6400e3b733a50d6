/**
 * Whether a character code of lower-cased text belongs to a word: ASCII letters and digits, and anything
 * beyond ASCII (a letter of another script, most likely). How excerpts and the pair re-ranking tell word
 * starts without tokenizing an entry again.
 */
export function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 122) || code >= 128;
}
