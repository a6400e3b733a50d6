/**
 * LoCoMo retrieval scores, as bench/src/locomo-retrieval.ts counts them (the measure in the shared
 * bench-data README): a question is a hit when any of its evidence turns is among the first 10 distinct
 * results; MRR@10 adds 1 / the rank of the first evidence turn there. Reported over all questions, per
 * LoCoMo question category and per conversation.
 */
import type { LocomoConversation } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";

export interface Tally {
  questions: number;
  hits: number;
  reciprocalRank: number;
}

export interface LocomoScores {
  all: Tally;
  byCategory: Map<number, Tally>;
  byConversation: Map<string, Tally>;
}

/** LoCoMo's question categories (the paper's names). */
export const locomoCategoryNames: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
  5: "adversarial",
};

const emptyTally = (): Tally => ({ questions: 0, hits: 0, reciprocalRank: 0 });

/** Where the first evidence turn is among the first 10 distinct known ids (0-based), or -1. */
export function firstEvidenceRank(
  returned: readonly string[],
  evidence: readonly string[],
  turnIds: ReadonlySet<string>,
): number {
  const found: string[] = [];
  for (const id of returned) if (turnIds.has(id) && !found.includes(id)) found.push(id);
  const wanted = new Set(evidence);
  return found.slice(0, 10).findIndex((id) => wanted.has(id));
}

/**
 * Scores the ids a system returned for each question: `returned[c][q]` for question `q` of conversation
 * `c`, in the order of `conversations`.
 */
export function scoreLocomo(
  conversations: readonly LocomoConversation[],
  returned: readonly (readonly (readonly string[])[])[],
): LocomoScores {
  const scores: LocomoScores = { all: emptyTally(), byCategory: new Map(), byConversation: new Map() };
  conversations.forEach((conversation, conversationIndex) => {
    const turnIds = new Set(conversation.turns.map((turn) => turn.dia_id));
    const perConversation = emptyTally();
    scores.byConversation.set(conversation.name, perConversation);
    conversation.questions.forEach((question, questionIndex) => {
      const rank = firstEvidenceRank(
        returned[conversationIndex]?.[questionIndex] ?? [],
        question.evidence,
        turnIds,
      );
      let perCategory = scores.byCategory.get(question.category);
      if (perCategory === undefined) {
        perCategory = emptyTally();
        scores.byCategory.set(question.category, perCategory);
      }
      for (const tally of [scores.all, perCategory, perConversation]) {
        tally.questions++;
        if (rank >= 0) {
          tally.hits++;
          tally.reciprocalRank += 1 / (rank + 1);
        }
      }
    });
  });
  return scores;
}

/** A share with three decimals, `n/a` for no questions. */
export function shareOf(tally: Tally | undefined, of: "hits" | "reciprocalRank"): string {
  return tally === undefined || tally.questions === 0 ? "n/a" : (tally[of] / tally.questions).toFixed(3);
}

/** The table locomo-retrieval.ts prints: hit@10, MRR@10 and hit@10 per category, one row per system. */
export function locomoTable(results: readonly (readonly [string, LocomoScores])[]): string {
  const categories = [...new Set(results.flatMap(([, scores]) => [...scores.byCategory.keys()]))].sort();
  return markdownTable(
    [
      "provider",
      "hit@10",
      "MRR@10",
      ...categories.map((category) => `${locomoCategoryNames[category] ?? category} (${category})`),
    ],
    results.map(([name, scores]) => [
      name,
      shareOf(scores.all, "hits"),
      shareOf(scores.all, "reciprocalRank"),
      ...categories.map((category) => shareOf(scores.byCategory.get(category), "hits")),
    ]),
  );
}
