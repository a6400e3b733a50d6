/**
 * The handle of a key: one index token that finds an entry by (scope, key) with an FTS5 term look-up
 * instead of a scan. It is a 53-bit hash of the scope id and the key, written in decimal, so the `porter`
 * stemmer leaves it alone and no query text can produce it (query terms are only ever matched against the
 * `key` and `content` columns). Two keys that share a handle cost one extra row read and nothing else: every
 * look-up also compares the stored scope and key exactly.
 */
export function keyHandle(scope: number, key: string): string {
  // Two 32-bit FNV-1a style lanes with different offsets and primes, over the scope id, a separator and
  // the key's UTF-16 code units; combined into 53 bits (the largest integer a double holds exactly).
  let high = 0x811c9dc5 ^ scope;
  let low = 0x01000193 ^ Math.imul(scope, 0x9e3779b1);
  const mix = (unit: number) => {
    high = Math.imul(high ^ unit, 0x01000193);
    low = Math.imul(low ^ unit, 0x5bd1e995);
    low ^= low >>> 15;
  };
  mix(0xffff);
  for (let index = 0; index < key.length; index++) mix(key.charCodeAt(index));
  // Final avalanche so short keys that differ in one unit spread over all bits.
  high ^= high >>> 16;
  high = Math.imul(high, 0x85ebca6b);
  high ^= high >>> 13;
  low ^= low >>> 16;
  low = Math.imul(low, 0xc2b2ae35);
  low ^= low >>> 13;
  return String((high >>> 11) * 0x100000000 + (low >>> 0));
}
