import { heldStems, planQuery } from "@contextblocks/text";
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
   * own text holds, each term weighed by how rare it is among the candidates (a word every candidate holds tells
   * little).
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

/** Whether the text ends in a question mark, trailing punctuation, spaces and emoji aside (read from the end). */
export function endsWithQuestion(text: string): boolean {
  const characters = Array.from(text.slice(-64));
  for (let index = characters.length - 1; index >= 0; index--) {
    const character = characters[index] as string;
    if (character === "?" || character === "？") return true;
    if (!afterQuestion.test(character) && !emojiJoiners.has(character)) return false;
  }
  return false;
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
    `${candidate.sessionId ?? ""}\u0000${candidate.id}`;
  const byKey = new Map(candidates.map((candidate) => [keyOf(candidate), candidate]));
  const asks = new Map(candidates.map((candidate) => [candidate, endsWithQuestion(candidate.text)]));
  const coverage = coverageWeight === 0 ? null : coverageOf(query, candidates);
  const scores = candidates.map((candidate) => candidate.score as number);
  const best = Math.max(0, ...scores);
  // A store's order can hold more than its scores (a day's share, the turns near the best match): each
  // candidate stands at the best score at or below its place, so without a change the order is the store's.
  const places: number[] = [];
  let floor = Number.NEGATIVE_INFINITY;
  for (let index = scores.length - 1; index >= 0; index--) {
    floor = Math.max(floor, scores[index] as number);
    places[index] = floor;
  }
  const rescored = candidates.map((candidate, index) => {
    const own = scores[index] as number;
    let change = coverageWeight * best * (coverage?.[index] ?? 0);
    if (asks.get(candidate) === true) change -= Math.min(1, questionDiscount) * own;
    const parent =
      typeof candidate.parentId === "string"
        ? byKey.get(keyOf({ sessionId: candidate.sessionId, id: candidate.parentId }))
        : undefined;
    const lift = parent !== undefined && asks.get(parent) === true ? replyLift * (parent.score as number) : 0;
    return {
      candidate,
      parent: lift > 0 ? parent : undefined,
      lift,
      place: (places[index] as number) + change,
      index,
    };
  });
  // The lift takes a reply up to its question at most, and then right after it: an answer is read after what
  // it answers. A reply that stands above its question on its own words stays there.
  const placeOf = new Map(rescored.map((entry) => [entry.candidate, entry.place]));
  const ordered = rescored.map((entry) => {
    const question = entry.parent === undefined ? undefined : placeOf.get(entry.parent);
    if (question === undefined || entry.place >= question) return { ...entry, after: 0 };
    const lifted = entry.place + entry.lift;
    return lifted < question
      ? { ...entry, place: lifted, after: 0 }
      : { ...entry, place: question, after: 1 };
  });
  ordered.sort(
    (left, right) => right.place - left.place || left.after - right.after || left.index - right.index,
  );
  return ordered.map(({ candidate }) => candidate);
}

function hasScore(candidate: SearchCandidate): boolean {
  return typeof candidate.score === "number" && Number.isFinite(candidate.score) && candidate.score >= 0;
}

/** For each candidate, the rarity-weighed share of the query's terms its own text holds (0 to 1). */
function coverageOf(query: string, candidates: readonly SearchCandidate[]): number[] {
  const terms = planQuery(query)?.terms.map((term) => term.stem) ?? [];
  const wanted = new Set(terms);
  const held = candidates.map((candidate) => heldStems(candidate.text, wanted));
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
