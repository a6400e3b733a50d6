import { estimateTokens } from "@contextblocks/core";
import type { SearchResult } from "@contextblocks/sessions";
import { tokenize } from "@contextblocks/text";

/** One search's hits as a reader meets them. */
export interface HitFigures {
  /** Whether an evidence turn is among the hits (hit@k counts the hits' ids, not their context). */
  hit: boolean;
  shown: number;
  /** Hits whose own text holds a query term (stemmed): the share of them is the precision. */
  holding: number;
  /**
   * Hits whose text after a leading "Name:" label (a transcript's speaker, as LoCoMo's turns are written)
   * holds a query term: a question that names a speaker finds that word in the label of half the turns.
   */
  holdingPastLabel: number;
  /** The hits' text and their context turns, estimated. */
  tokens: number;
}

/** A leading speaker label: one to three capitalised words and a colon ("Caroline: ", "Dr. Mary Ann: "). */
const speakerLabel = /^\p{Lu}[\p{L}.'’-]*(?: [\p{L}.'’-]+){0,2}:\s*/u;

export function hitFiguresOf(
  results: readonly SearchResult[],
  evidence: ReadonlySet<string>,
  stems: ReadonlySet<string>,
): HitFigures {
  let holding = 0;
  let holdingPastLabel = 0;
  let tokens = 0;
  for (const result of results) {
    if (tokenize(result.content).some((token) => stems.has(token.stem))) holding++;
    const pastLabel = result.content.replace(speakerLabel, "");
    if (tokenize(pastLabel).some((token) => stems.has(token.stem))) holdingPastLabel++;
    tokens += estimateTokens(result.content);
    for (const turn of result.context ?? []) tokens += estimateTokens(turn.text);
  }
  return {
    hit: results.some((result) => evidence.has(result.id)),
    shown: results.length,
    holding,
    holdingPastLabel,
    tokens,
  };
}
