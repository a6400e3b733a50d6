/**
 * The fingerprint of a block configuration, stored with the frozen prompt it rendered, so a wake compares
 * one short string instead of reading every header of the stored prompt back (`findDrift`). Not a security
 * measure: a non-cryptographic 64-bit hash (two 32-bit FNV-1a lanes) of exactly what drift detection compares
 * (each block's header shape, whether it may be absent, their order), tied to the prompt it was stored with
 * by the prompt's length and a hash of its first and last 32 characters. A fingerprint that does not match is never
 * taken as drift: the full header check decides then (see docs/wake-cost.md).
 */

/** The format's version, first in every fingerprint: a later format never matches this one's. */
const FORMAT = "cb1";

/** Characters of each end of the prompt that the fingerprint covers. */
const EDGE = 32;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** The second lane starts elsewhere, so the two lanes are two different hashes of the same text. */
const SECOND_OFFSET = 0x5bd1e995;

/** Two 32-bit hashes of a text, as one pair. */
export interface HashPair {
  readonly first: number;
  readonly second: number;
}

/** Hashes `text` from `from` to `to` into both lanes, starting from `start`. */
function hashInto(start: HashPair, text: string, from: number, to: number): HashPair {
  let first = start.first;
  let second = start.second;
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    first = Math.imul(first ^ code, FNV_PRIME);
    second = Math.imul(second ^ code, 0x2127599b);
  }
  return { first: first >>> 0, second: second >>> 0 };
}

const EMPTY: HashPair = { first: FNV_OFFSET, second: SECOND_OFFSET };

export function hashText(text: string): HashPair {
  return hashInto(EMPTY, text, 0, text.length);
}

/**
 * Folds the hashes of a configuration's headers, in order, into one pair, one header at a time: the
 * registry folds each block's header while it registers the block (`BlockRegistry.addAll`), so a wake walks
 * its blocks once, not once to register them and again for the fingerprint.
 */
export class HashFold {
  #first: number;
  #second: number;

  /** `count`: how many hashes will be folded (part of the result, so a prefix never matches the whole). */
  constructor(count: number) {
    this.#first = FNV_OFFSET ^ count;
    this.#second = SECOND_OFFSET ^ count;
  }

  add(hash: HashPair): void {
    this.#first = Math.imul(Math.imul(this.#first ^ hash.first, FNV_PRIME) ^ (hash.second >>> 16), FNV_PRIME);
    this.#second = Math.imul(
      Math.imul(this.#second ^ hash.second, 0x2127599b) ^ (hash.first >>> 16),
      0x2127599b,
    );
  }

  result(): HashPair {
    return { first: this.#first >>> 0, second: this.#second >>> 0 };
  }
}

/** Folds the hashes of a configuration's headers, in order, into one pair. */
export function foldHashes(hashes: readonly HashPair[]): HashPair {
  const fold = new HashFold(hashes.length);
  for (const hash of hashes) fold.add(hash);
  return fold.result();
}

/**
 * The fingerprint stored with `prompt` when it was rendered from the configuration whose folded header
 * hashes are `configuration`. Costs the same whatever the prompt's size.
 */
export function promptFingerprint(configuration: string, prompt: string): string {
  const length = prompt.length;
  const head = Math.min(EDGE, length);
  let edges = FNV_OFFSET;
  for (let index = 0; index < head; index++) edges = Math.imul(edges ^ prompt.charCodeAt(index), FNV_PRIME);
  for (let index = Math.max(head, length - EDGE); index < length; index++) {
    edges = Math.imul(edges ^ prompt.charCodeAt(index), FNV_PRIME);
  }
  return `${configuration}.${length}.${edges >>> 0}`;
}

/** The configuration's part of every prompt fingerprint, from its folded header hashes. */
export function configurationFingerprint(headers: HashPair): string {
  return `${FORMAT}.${headers.first.toString(36)}.${headers.second.toString(36)}`;
}
