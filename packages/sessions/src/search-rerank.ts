import { heldStems, planQuery } from "@contextblocks/text";
import { messageKeyOf } from "./message-key.js";
import type { SearchCandidate } from "./search-hits.js";

/**
 * A second look at the candidates a store ranked, before `selectSearchHits` makes hits of them: signals a
 * full-text score cannot see, read from the candidates alone, so every store gets them from this one place.
 * In a conversation a question is rarely the answer: the turn that replies to it is. A turn that asks
 * "How long have you been married?" holds the query's words; "5 years already!" after it holds none.
 */
export interface CandidateReranking {
  /** A candidate whose own text ends in a question mark stands at `1 - questionDiscount` times its score. */
  questionDiscount: number;
  /**
   * A candidate replying to a question among the candidates (its parent) moves up by this share of that
   * question's score, at most to right after the question.
   */
  replyLift: number;
  /**
   * The share of the best score a candidate moves up by, in proportion to the share of the query's terms its
   * own text holds (in its first 32 kB: `rerankedCharacters`), each term weighed by how rare it is among the
   * candidates (a word every candidate holds tells little).
   */
  coverageWeight: number;
}

/** Bench's choice on the LoCoMo conversations it has (`session-search-selection`, leave-one-conversation-out). */
export const defaultCandidateReranking: Readonly<CandidateReranking> = Object.freeze({
  questionDiscount: 0.2,
  replyLift: 0.4,
  coverageWeight: 0.2,
});

/** Characters that may follow a closing question mark: "right?!", "(really?)", "fun? 😊". */
const afterQuestion = /[\s!.)\]"'’”\p{Extended_Pictographic}]/u;
/** The variation selector and the joiner inside an emoji ("❤️", "👩‍💻"). */
const emojiJoiners = new Set(["\uFE0F", "\u200D"]);
/** `afterQuestion` of each ASCII character, asked once: most texts end in ASCII. */
const asciiAfterQuestion = new Uint8Array(128).map((_, code) =>
  afterQuestion.test(String.fromCharCode(code)) ? 1 : 0,
);
/** Only the end of a text is read for its question mark (UTF-16 units). */
const questionTail = 64;

/**
 * Whether the text ends in a question mark, trailing punctuation, spaces and emoji aside: its last
 * `questionTail` units read from the end, character by character, without copying them out.
 */
export function endsWithQuestion(text: string): boolean {
  const start = Math.max(0, text.length - questionTail);
  for (let index = text.length - 1; index >= start; index--) {
    const code = text.charCodeAt(index);
    if (code === 0x3f || code === 0xff1f) return true;
    if (code < 0x80) {
      if (asciiAfterQuestion[code] !== 1) return false;
      continue;
    }
    // A low surrogate after a high one is one character (an emoji); a lone one, or a pair cut by the start of
    // what is read, is a character of its own, as it would be in `Array.from` of the text's end.
    const paired =
      code >= 0xdc00 && code <= 0xdfff && index > start && isHighSurrogate(text.charCodeAt(index - 1));
    const character = paired ? text.slice(index - 1, index + 1) : (text[index] as string);
    if (paired) index--;
    if (!afterQuestion.test(character) && !emojiJoiners.has(character)) return false;
  }
  return false;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The candidates in a new order (`CandidateReranking`), ties kept in the store's order (which may rank a
 * candidate above a better score: its day, its neighbours). Only the order changes: each candidate keeps the
 * score its store gave it, so whether it is a hit, a near-match shown as context or cut stays the ranking's
 * call (`selectSearchHits`): an answer moved up next to its question is a hit only when its words earned it.
 * Candidates a store gave no score (it has ordered and cut them itself), an empty query and all-zero weights
 * leave the candidates as they are.
 */
export function rerankSearchCandidates(
  query: string,
  candidates: readonly SearchCandidate[],
  reranking: Readonly<CandidateReranking> = defaultCandidateReranking,
): SearchCandidate[] {
  const { questionDiscount, replyLift, coverageWeight } = reranking;
  if (questionDiscount === 0 && replyLift === 0 && coverageWeight === 0) return [...candidates];
  if (candidates.length === 0 || candidates.some((candidate) => !hasScore(candidate))) return [...candidates];
  const keyOf = (candidate: { sessionId?: string | undefined; id: string }) =>
    messageKeyOf(candidate.sessionId, candidate.id);
  // Indexes, not objects: a search re-ranks on every call, and this runs over its candidates in place.
  const lastWithKey = new Map<string, number>();
  candidates.forEach((candidate, index) => {
    lastWithKey.set(keyOf(candidate), index);
  });
  const asks = candidates.map((candidate) => endsWithQuestion(candidate.text));
  const coverage = coverageWeight === 0 ? null : coverageOf(query, candidates);
  const scores = candidates.map((candidate) => candidate.score as number);
  let best = 0;
  for (const score of scores) if (score > best) best = score;
  // A store's order can hold more than its scores (a day's share, the turns near the best match): each
  // candidate stands at the best score at or below its place, so without a change the order is the store's.
  const places: number[] = new Array(scores.length);
  let floor = Number.NEGATIVE_INFINITY;
  for (let index = scores.length - 1; index >= 0; index--) {
    floor = Math.max(floor, scores[index] as number);
    places[index] = floor;
  }
  const lifts: number[] = new Array(scores.length);
  const questions: number[] = new Array(scores.length);
  candidates.forEach((candidate, index) => {
    const own = scores[index] as number;
    let change = coverageWeight * best * (coverage?.[index] ?? 0);
    if (asks[index] === true) change -= Math.min(1, questionDiscount) * own;
    const parent =
      typeof candidate.parentId === "string"
        ? lastWithKey.get(keyOf({ sessionId: candidate.sessionId, id: candidate.parentId }))
        : undefined;
    const lift = parent !== undefined && asks[parent] === true ? replyLift * (scores[parent] as number) : 0;
    lifts[index] = lift;
    questions[index] = lift > 0 ? (parent as number) : -1;
    places[index] = (places[index] as number) + change;
  });
  // The lift takes a reply up to its question at most, and then right after it: an answer is read after what
  // it answers. A reply that stands above its question on its own words stays there.
  const finalPlaces: number[] = new Array(scores.length);
  const after: number[] = new Array(scores.length);
  for (let index = 0; index < scores.length; index++) {
    const place = places[index] as number;
    const asked = questions[index] as number;
    const question = asked < 0 ? undefined : (places[asked] as number);
    after[index] = 0;
    finalPlaces[index] = place;
    if (question === undefined || place >= question) continue;
    const lifted = place + (lifts[index] as number);
    if (lifted < question) finalPlaces[index] = lifted;
    else {
      finalPlaces[index] = question;
      after[index] = 1;
    }
  }
  const order = scores.map((_, index) => index);
  order.sort(
    (left, right) =>
      (finalPlaces[right] as number) - (finalPlaces[left] as number) ||
      (after[left] as number) - (after[right] as number) ||
      left - right,
  );
  return order.map((index) => candidates[index] as SearchCandidate);
}

/** The stems of a query's terms (`planQuery` remembers the plan the store made of it just before). */
function queryStems(query: string): readonly string[] {
  return planQuery(query)?.terms.map((term) => term.stem) ?? [];
}

function hasScore(candidate: SearchCandidate): boolean {
  return typeof candidate.score === "number" && Number.isFinite(candidate.score) && candidate.score >= 0;
}

/**
 * Characters of a candidate's text read for the query's terms: a turn of a conversation is far shorter, and a
 * search re-ranks 30 candidates on every call, which may each be a pasted file (SQLite's search rows hold up to
 * 256 kB of a message's text, Postgres and the in-memory store hand over all of it: 30 texts of 1 MB took 125 ms
 * to read whole).
 */
export const rerankedCharacters = 32_768;

/**
 * For each candidate, the rarity-weighed share of the query's terms its own text holds (0 to 1), read in its
 * first `rerankedCharacters`.
 */
function coverageOf(query: string, candidates: readonly SearchCandidate[]): number[] {
  const terms = queryStems(query);
  const wanted = new Set(terms);
  const held = candidates.map((candidate) => heldStems(candidate.text, wanted, rerankedCharacters));
  const rarity = terms.map((term) => {
    const holding = held.filter((stems) => stems.has(term)).length;
    return Math.log((candidates.length + 1) / (holding + 0.5));
  });
  const total = rarity.reduce((sum, weight) => sum + weight, 0);
  if (total <= 0) return candidates.map(() => 0);
  return held.map(
    (stems) =>
      terms.reduce((sum, term, index) => sum + (stems.has(term) ? (rarity[index] ?? 0) : 0), 0) / total,
  );
}
