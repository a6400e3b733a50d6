/**
 * Whether a learned re-ranker of the candidates finds recall the shipped one (`rerankSearchCandidates`) leaves.
 * Built like `session-search-selection` (every turn one message `"<speaker>: <text>"`, roles alternating,
 * `createdAt` its session's time when `times` is on; one question asks the store for `candidateCount(10)`
 * candidates, each store with its default ranking; `selectSearchHits` makes hits of them).
 *
 * The learned re-ranker is a linear score over features read from the candidates alone (what a re-ranker in
 * store-kit could see on every backend): the shipped re-ranking's three weights (a question's discount, its
 * reply's lift, the coverage of the query's rarer terms), plus each candidate's
 * - length: its distinct content words, log-scaled (1 at 30 and more);
 * - rarest: the rarest query term its own text holds, as a share of the rarest term's weight;
 * - all terms: whether its own text holds every query term;
 * - adjacent: the better store score of its parent and child among the candidates, as a share of the best;
 * - neighbours' coverage: the better coverage of its parent's and child's text;
 * - neighbour match: the store matched it by the turns around it only;
 * - rank: 1 / (1 + its place in the store's order).
 * Each feature moves a candidate by its weight times the best score, before the shipped re-ranking orders the
 * candidates; only the order changes (the hit selection reads the store's scores). The weights are fitted by
 * coordinate ascent over a small grid of values per weight (three rounds, a change kept only when it raises
 * hit@10 on the training questions), on the other conversations for each held-out one: the figures are the
 * held-out fold mean ± spread (sample standard deviation over the folds). Beside it, on the same folds: the
 * shipped defaults, and the shipped three weights alone fitted the same way.
 *
 *   cd bench && node --import tsx src/session-search-learned-rerank.ts [--smoke] [--no-postgres | --postgres-only]
 */
import {
  type CandidateReranking,
  candidateCount,
  defaultCandidateReranking,
  rerankSearchCandidates,
  type SearchCandidate,
  type SessionStoreV1,
  selectSearchHits,
} from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { isStopword, planQuery, tokenize } from "@contextblocks/text";
import Database from "better-sqlite3";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { appendConversation } from "./locomo-session.js";
import { type LocomoTurnTimes, locomoTurnTimes } from "./locomo-time.js";
import { markdownTable } from "./markdown.js";
import { type HitFigures, hitFiguresOf } from "./search-hit-figures.js";
import { mean, sampleStandardDeviation } from "./statistics.js";
import { optionalPostgres, postgresSessionBackends, type SessionStoreBackend } from "./throwaway-postgres.js";

const limit = 10;

const featureNames = [
  "length",
  "rarest",
  "allTerms",
  "adjacent",
  "neighbourCoverage",
  "neighbourMatch",
  "rank",
] as const;
type FeatureName = (typeof featureNames)[number];

/** The learned re-ranker's weights: the shipped re-ranking's three and one per feature. */
interface Weights extends CandidateReranking {
  features: Record<FeatureName, number>;
}

/** The values coordinate ascent tries for each weight (0 included: a feature may stay off). */
const rerankingGrid: Record<keyof CandidateReranking, readonly number[]> = {
  questionDiscount: [0, 0.2, 0.4],
  replyLift: [0, 0.2, 0.4, 0.6],
  coverageWeight: [0, 0.1, 0.2, 0.3, 0.5],
};
const featureGrid: Record<FeatureName, readonly number[]> = {
  length: [-0.2, -0.1, 0, 0.1, 0.2],
  rarest: [-0.1, 0, 0.1, 0.2, 0.3],
  allTerms: [0, 0.1, 0.2, 0.3],
  adjacent: [-0.1, 0, 0.05, 0.1, 0.2],
  neighbourCoverage: [-0.2, -0.1, 0, 0.1, 0.2],
  neighbourMatch: [-0.2, -0.1, 0, 0.1],
  rank: [0, 0.1, 0.2, 0.4],
};
const rounds = 3;

const shipped: Weights = {
  ...defaultCandidateReranking,
  features: Object.fromEntries(featureNames.map((name) => [name, 0])) as Record<FeatureName, number>,
};

/** One question as asked: the store's candidates, their features, and what scoring needs. */
interface Asked {
  question: string;
  candidates: SearchCandidate[];
  features: Record<FeatureName, number[]>;
  best: number;
  evidence: ReadonlySet<string>;
  stems: ReadonlySet<string>;
}

const stemsByText = new Map<string, ReadonlySet<string>>();
function contentStems(text: string): ReadonlySet<string> {
  let stems = stemsByText.get(text);
  if (stems === undefined) {
    stems = new Set(
      tokenize(text)
        .filter((token) => !isStopword(token.folded))
        .map((token) => token.stem),
    );
    stemsByText.set(text, stems);
  }
  return stems;
}

function featuresOf(question: string, candidates: readonly SearchCandidate[]): Record<FeatureName, number[]> {
  const terms = planQuery(question)?.terms.map((term) => term.stem) ?? [];
  const held = candidates.map((candidate) => contentStems(candidate.text));
  // A term's weight: how rare it is among the candidates (as the shipped coverage weighs it).
  const rarity = terms.map((term) =>
    Math.log((candidates.length + 1) / (held.filter((stems) => stems.has(term)).length + 0.5)),
  );
  const total = rarity.reduce((sum, weight) => sum + weight, 0);
  const rarest = Math.max(0, ...rarity);
  const coverage = held.map((stems) =>
    total <= 0
      ? 0
      : terms.reduce((sum, term, index) => sum + (stems.has(term) ? (rarity[index] ?? 0) : 0), 0) / total,
  );
  const best = Math.max(0, ...candidates.map((candidate) => candidate.score ?? 0));
  const place = new Map(candidates.map((candidate, index) => [candidate.id, index]));
  const parents = candidates.map((candidate) =>
    typeof candidate.parentId === "string" ? (place.get(candidate.parentId) ?? -1) : -1,
  );
  const children = candidates.map(() => -1);
  parents.forEach((parent, index) => {
    if (parent >= 0) children[parent] = index;
  });
  const around = (index: number, value: (at: number) => number) =>
    Math.max(
      (parents[index] ?? -1) >= 0 ? value(parents[index] as number) : 0,
      (children[index] ?? -1) >= 0 ? value(children[index] as number) : 0,
    );
  const scoreShare = (at: number) => (best > 0 ? (candidates[at]?.score ?? 0) / best : 0);
  return {
    length: held.map((stems) => Math.min(1, Math.log(1 + stems.size) / Math.log(30))),
    rarest: held.map((stems) =>
      rarest <= 0
        ? 0
        : Math.max(0, ...terms.map((term, index) => (stems.has(term) ? (rarity[index] ?? 0) : 0))) / rarest,
    ),
    allTerms: held.map((stems) => (terms.length > 0 && terms.every((term) => stems.has(term)) ? 1 : 0)),
    adjacent: candidates.map((_, index) => around(index, scoreShare)),
    neighbourCoverage: candidates.map((_, index) => around(index, (at) => coverage[at] ?? 0)),
    neighbourMatch: candidates.map((candidate) => (candidate.matchedBy === "neighbours" ? 1 : 0)),
    rank: candidates.map((_, index) => 1 / (1 + index)),
  };
}

/**
 * The candidates in the learned order: each moved by its features' weighted sum (times the best score), then
 * the shipped re-ranking; the hits are made from the candidates as the store scored them.
 */
function rerank(asked: Asked, weights: Weights): SearchCandidate[] {
  const moved = featureNames.some((name) => weights.features[name] !== 0);
  if (!moved) return rerankSearchCandidates(asked.question, asked.candidates, weights);
  const shifted: SearchCandidate[] = asked.candidates.map((candidate, index) => {
    let change = 0;
    for (const name of featureNames) change += weights.features[name] * (asked.features[name][index] ?? 0);
    return { ...candidate, score: Math.max(0, (candidate.score ?? 0) + asked.best * change) };
  });
  const original = new Map<SearchCandidate, SearchCandidate>(
    shifted.map((candidate, index) => [candidate, asked.candidates[index] as SearchCandidate]),
  );
  return rerankSearchCandidates(asked.question, shifted, weights).map(
    (candidate) => original.get(candidate) as SearchCandidate,
  );
}

function scoreOf(asked: Asked, weights: Weights): HitFigures {
  const results = selectSearchHits(rerank(asked, weights), limit);
  return hitFiguresOf(results, asked.evidence, asked.stems);
}

const hitRate = (questions: readonly Asked[], weights: Weights) =>
  questions.filter((asked) => scoreOf(asked, weights).hit).length / Math.max(questions.length, 1);

/** Coordinate ascent from the shipped weights over the given weights' grids, on hit@10. */
function fitWeights(questions: readonly Asked[], learnFeatures: boolean): Weights {
  let weights: Weights = { ...shipped, features: { ...shipped.features } };
  let best = hitRate(questions, weights);
  const trials: ((value: number) => Weights)[] = [];
  const values: (readonly number[])[] = [];
  for (const name of Object.keys(rerankingGrid) as (keyof CandidateReranking)[]) {
    trials.push((value) => ({ ...weights, [name]: value }));
    values.push(rerankingGrid[name]);
  }
  if (learnFeatures) {
    for (const name of featureNames) {
      trials.push((value) => ({ ...weights, features: { ...weights.features, [name]: value } }));
      values.push(featureGrid[name]);
    }
  }
  for (let round = 0; round < rounds; round++) {
    let changed = false;
    trials.forEach((trial, index) => {
      for (const value of values[index] ?? []) {
        const candidate = trial(value);
        const rate = hitRate(questions, candidate);
        if (rate > best) {
          best = rate;
          weights = candidate;
          changed = true;
        }
      }
    });
    if (!changed) break;
  }
  return weights;
}

interface FoldFigures {
  hit: number;
  precision: number;
  tokens: number;
}

function figuresOf(questions: readonly Asked[], weights: Weights): FoldFigures {
  let hits = 0;
  let shown = 0;
  let holding = 0;
  let tokens = 0;
  for (const asked of questions) {
    const scored = scoreOf(asked, weights);
    if (scored.hit) hits++;
    shown += scored.shown;
    holding += scored.holding;
    tokens += scored.tokens;
  }
  const count = Math.max(questions.length, 1);
  return { hit: hits / count, precision: shown === 0 ? 1 : holding / shown, tokens: tokens / count };
}

function weightsName(weights: Weights): string {
  const features = featureNames
    .filter((name) => weights.features[name] !== 0)
    .map((name) => `${name} ${weights.features[name]}`);
  return [
    `question ${weights.questionDiscount}`,
    `reply ${weights.replyLift}`,
    `coverage ${weights.coverageWeight}`,
    ...features,
  ].join(", ");
}

async function askAll(
  backend: SessionStoreBackend,
  conversations: readonly LocomoConversation[],
  turnTimes: LocomoTurnTimes | null,
): Promise<Map<string, Asked[]>> {
  const byConversation = new Map<string, Asked[]>();
  for (const conversation of conversations) {
    const sessionId = `${conversation.name}${turnTimes === null ? "" : "-t"}`;
    const store = backend.store(sessionId);
    const idOf = await appendConversation(store, conversation, sessionId, turnTimes?.get(conversation.name));
    const search = store.search as NonNullable<SessionStoreV1["search"]>;
    const asked: Asked[] = [];
    for (const question of conversation.questions) {
      const candidates: SearchCandidate[] = await search.call(
        store,
        question.question,
        candidateCount(limit, 1_000),
      );
      asked.push({
        question: question.question,
        candidates,
        features: featuresOf(question.question, candidates),
        best: Math.max(0, ...candidates.map((candidate) => candidate.score ?? 0)),
        evidence: new Set(question.evidence.map(idOf)),
        stems: new Set(planQuery(question.question)?.terms.map((term) => term.stem) ?? []),
      });
    }
    byConversation.set(conversation.name, asked);
  }
  return byConversation;
}

const meanAndSpread = (values: readonly number[], digits: number) =>
  `${mean(values).toFixed(digits)} ± ${sampleStandardDeviation(values).toFixed(digits)}`;

export async function run(
  options: { smoke?: boolean; postgres?: boolean; postgresOnly?: boolean } = {},
): Promise<{ markdown: string }> {
  const conversations = readLocomo(options.smoke === true);
  if (conversations === null) {
    return { markdown: `Skipped: ${locomoDirectory.pathname} is not on this machine.` };
  }
  const turnTimes = locomoTurnTimes(conversations);
  const databases = new Map<string, Database.Database>();
  const sqlite: SessionStoreBackend[] = [
    {
      name: "SQLite (lean)",
      store(sessionId) {
        const database = databases.get(sessionId) ?? new Database(":memory:");
        databases.set(sessionId, database);
        return new SqliteSessionStore(database, { sessionId, newDatabaseLayout: "lean" });
      },
    },
  ];
  const backends = options.postgresOnly === true ? [] : sqlite;
  const postgres = await optionalPostgres(options.postgres !== false);
  backends.push(...postgresSessionBackends(postgres));
  const note = postgres.skipped === "" ? "" : `\n\n${postgres.skipped}`;
  const rows: string[][] = [];
  const choices: string[] = [];
  try {
    for (const backend of backends) {
      for (const times of [true, false]) {
        const byConversation = await askAll(backend, conversations, times ? turnTimes : null);
        const all = [...byConversation.values()].flat();
        const columns = {
          shipped: [] as FoldFigures[],
          three: [] as FoldFigures[],
          learned: [] as FoldFigures[],
        };
        const chosen: string[] = [];
        for (const [heldOut, questions] of byConversation) {
          const training = [...byConversation]
            .filter(([name]) => name !== heldOut)
            .flatMap(([, asked]) => asked);
          const three = fitWeights(training, false);
          const learned = fitWeights(training, true);
          columns.shipped.push(figuresOf(questions, shipped));
          columns.three.push(figuresOf(questions, three));
          columns.learned.push(figuresOf(questions, learned));
          chosen.push(`${heldOut} [${weightsName(learned)}]`);
        }
        const hitAndPrecision = (folds: readonly FoldFigures[]) =>
          `${meanAndSpread(
            folds.map((fold) => fold.hit),
            3,
          )} / ${mean(folds.map((fold) => fold.precision)).toFixed(3)} / ${mean(folds.map((fold) => fold.tokens)).toFixed(0)}`;
        rows.push([
          backend.name,
          times ? "yes" : "no",
          hitAndPrecision(columns.shipped),
          hitAndPrecision(columns.three),
          hitAndPrecision(columns.learned),
        ]);
        choices.push(
          `${backend.name}, times ${times ? "on" : "off"}: ${chosen.join("; ")}; on all: [${weightsName(fitWeights(all, true))}]`,
        );
      }
    }
  } finally {
    await postgres.close();
  }
  const questions = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  return {
    markdown:
      [
        `${conversations.length} conversation(s), ${questions} questions${options.smoke === true ? " (smoke)" : ""}, ` +
          "each store with its default ranking. Held-out fold mean ± spread of hit@10 / mean precision (hits " +
          "whose own text holds a query term) / mean tokens per call; the weights fitted on the other " +
          "conversations by coordinate ascent on hit@10.",
        "",
        markdownTable(
          [
            "backend",
            "message times",
            "shipped re-ranking (defaults)",
            "its three weights fitted (LOO)",
            "learned: three weights + features (LOO)",
          ],
          rows,
        ),
        "",
        "Learned weights per held-out conversation, and fitted on all:",
        "",
        ...choices.map((line) => `- ${line}`),
      ].join("\n") + note,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    postgres: !process.argv.includes("--no-postgres"),
    postgresOnly: process.argv.includes("--postgres-only"),
  });
  console.log(result.markdown);
}
