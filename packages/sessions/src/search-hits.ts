import { estimateTokens } from "@contextblocks/core";
import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import { messageKeyOf } from "./message-key.js";
import type { SearchContextTurn, SearchResult } from "./session-store.js";
import type { StoredSearchHit } from "./session-store-v1.js";

/**
 * From the candidates a store ranked to the hits a person reads. A store ranks with every signal it has (the
 * turns around a message, its day, its speaker), so a turn whose own text holds none of the query's words can
 * rank too: the answer after a question that matched. Such a turn stays a hit only when the ranking itself
 * rates it near the best (`neighbourShare`), and never outnumbers the hits that hold a query word (one ranked
 * above every text match waits for the next and comes right after it); otherwise
 * it comes back as context of the hit beside it (`SearchResult.context`, capped in tokens). A message without
 * text is never a hit, and every candidate below `weakShare` of the best score is cut.
 */

/** Candidates scoring below this share of the best are cut (weak matches of a common word). */
export const weakShare = 0.15;

/** A candidate matched by its neighbours only stays a hit when it scores at least this share of the best. */
export const neighbourShare = 0.6;

/** Tokens the context of one hit may take (`estimateTokens`), its turns cut to fit. */
export const contextTokens = 120;

/**
 * How many candidates a store is asked for, for `limit` hits: the cut needs the runners-up to see. A limit
 * that is not a whole number from 1 to `maximum` is passed on as it is, for the store to refuse by name.
 */
export function candidateCount(limit: number, maximum: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > maximum) return limit;
  return Math.min(maximum, limit * 2 + 10);
}

/** Settings of `selectSearchHits`; bench chooses them by leave-one-conversation-out. */
export interface HitSelection {
  weakShare?: number;
  neighbourShare?: number;
  contextTokens?: number;
}

/** A candidate as the selection reads it: a stored hit, and the session it is in for cross-session searches. */
export interface SearchCandidate extends StoredSearchHit {
  sessionId?: string;
}

export function selectSearchHits(
  candidates: readonly SearchCandidate[],
  limit: number,
  selection: HitSelection = {},
): SearchResult[] {
  const weak = selection.weakShare ?? weakShare;
  const near = selection.neighbourShare ?? neighbourShare;
  const budget = selection.contextTokens ?? contextTokens;
  const cap = Math.floor(limit);
  const withText = candidates.filter((candidate) => candidate.text.trim().length > 0);
  const best = Math.max(0, ...withText.map((candidate) => scoreOf(candidate)));
  const kept: SearchCandidate[] = [];
  const left: SearchCandidate[] = [];
  // Neighbour matches near the best ranked above every text match, waiting for the first, best first.
  const waiting: SearchCandidate[] = [];
  let byText = 0;
  let byNeighbours = 0;
  for (const candidate of withText) {
    const score = scoreOf(candidate);
    // A store that gives no score keeps its order and its count (it has cut what it meant to).
    const strong = candidate.score === undefined || best <= 0 || score >= weak * best;
    if (kept.length >= cap || !strong) {
      left.push(candidate);
      continue;
    }
    if (candidate.matchedBy === "neighbours") {
      const nearBest = candidate.score === undefined || best <= 0 || score >= near * best;
      if (!nearBest) {
        left.push(candidate);
        continue;
      }
      // At least half the hits hold a query word: a neighbour match needs a text match to pair with. One
      // ranked above every text match (an answer above the question it replies to) waits for the first.
      if (byNeighbours >= byText) {
        (byText === 0 ? waiting : left).push(candidate);
        continue;
      }
      byNeighbours++;
      kept.push(candidate);
      continue;
    }
    byText++;
    kept.push(candidate);
    const paired = waiting.shift();
    if (paired !== undefined && kept.length < cap) {
      byNeighbours++;
      kept.push(paired);
    } else if (paired !== undefined) {
      waiting.unshift(paired);
    }
  }
  // Those that found no text match to pair with are context, in the store's order.
  if (waiting.length > 0) {
    const order = new Map(withText.map((candidate, index) => [candidate, index]));
    left.push(...waiting);
    left.sort((first, second) => (order.get(first) ?? 0) - (order.get(second) ?? 0));
  }
  const keyOf = (candidate: { sessionId?: string | undefined; id: string }) =>
    messageKeyOf(candidate.sessionId, candidate.id);
  const contexts = new Map<string, SearchContextTurn[]>();
  const spent = new Map<string, number>();
  // A near-match goes to the best hit within two turns of it on its branch, within that hit's budget.
  for (const turn of left) {
    if (turn.matchedBy !== "neighbours") continue;
    const owner = ownerOf(turn, kept, keyOf);
    if (owner === undefined) continue;
    const before = owner.parentId === turn.id || owner.grandparentId === turn.id;
    const key = keyOf(owner);
    const used = spent.get(key) ?? 0;
    const text = clipToTokens(turn.text, budget - used);
    if (text === null) continue;
    spent.set(key, used + estimateTokens(text));
    const list = contexts.get(key) ?? [];
    list.push({ id: turn.id, role: turn.role, text, position: before ? "before" : "after" });
    contexts.set(key, list);
  }
  return kept.map((hit) => {
    const result: SearchResult = {
      id: hit.id,
      role: hit.role,
      content: hit.text,
      matchedBy: hit.matchedBy ?? "text",
    };
    if (hit.createdAt !== null) result.createdAt = hit.createdAt;
    if (hit.sessionId !== undefined) result.sessionId = hit.sessionId;
    // Shown in reading order, the turns before the hit first, whatever order the ranking met them in.
    const context =
      contexts
        .get(keyOf(hit))
        ?.sort((first, second) => Number(first.position === "after") - Number(second.position === "after")) ??
      hit.context;
    if (context !== undefined && context.length > 0) result.context = context;
    return result;
  });
}

function scoreOf(candidate: StoredSearchHit): number {
  const score = candidate.score;
  return typeof score === "number" && Number.isFinite(score) ? score : 0;
}

/**
 * The hit a near-match explains: the best ranked hit among its parent, its grandparent, its children and its
 * grandchildren (the turns whose words lent it its score).
 */
function ownerOf(
  turn: SearchCandidate,
  hits: readonly SearchCandidate[],
  keyOf: (candidate: { sessionId?: string | undefined; id: string }) => string,
): SearchCandidate | undefined {
  const ancestors = (candidate: SearchCandidate): string[] =>
    [candidate.parentId, candidate.grandparentId]
      .filter((id): id is string => typeof id === "string")
      .map((id) => keyOf({ sessionId: candidate.sessionId, id }));
  const key = keyOf(turn);
  const near = new Set(ancestors(turn));
  return hits.find((hit) => near.has(keyOf(hit)) || ancestors(hit).includes(key));
}

/**
 * A text longer than this many characters a token is cut without being estimated whole: a pasted file's
 * tokens are counted in a prefix only, and whitespace, which counts for no token, cannot make a context turn
 * of a few tokens megabytes long.
 */
const charactersPerTokenAtMost = 64;

/** The text cut to about `tokens` tokens at a word boundary ("…" marks the cut); `null` when no room is left. */
function clipToTokens(text: string, tokens: number): string | null {
  if (tokens < 8) return null;
  if (text.length <= tokens * charactersPerTokenAtMost && estimateTokens(text) <= tokens) return text;
  let end = Math.min(text.length, tokens * 4);
  while (end > 0 && estimateTokens(text.slice(0, end)) > tokens - 1) end = Math.floor(end * 0.8);
  const space = text.lastIndexOf(" ", end);
  // Cut by UTF-16 units, never inside a surrogate pair: a lone surrogate in a tool result the model reads
  // (session_search) is text some model APIs refuse as invalid JSON.
  const cut = wellFormedPrefix(text, space > end / 2 ? space : end).trimEnd();
  return cut.length === 0 ? null : `${cut}…`;
}
