/**
 * Where session search loses recall on LoCoMo, and whether re-ranking its candidates gets it back. Built like
 * `session-search-selection` (every turn one message `"<speaker>: <text>"`, roles alternating, `createdAt` its
 * session's time when `times` is on), each store ranking with its defaults; every question asks the store
 * for 100 candidates.
 *
 * - Reach: the share of questions with an evidence turn among the store's first k candidates, beside hit@10
 *   after `selectSearchHits` (what `session.search` returns, from `candidateCount(10)` candidates). Reach at
 *   10 is what the ranking alone gives; the gap to hit@10 is what the readable hit selection costs; reach at
 *   30 to 100 is what a re-ranking of the candidates could at best recover.
 * - Re-rankers of the first 30 candidates, each a family of weights (weight 0: the store's order), the weight
 *   chosen by leave-one-conversation-out on hit@10 after the selection (fold mean ± spread):
 *   - feedback: the words of the best candidates (not in the query) lift the candidates that share them,
 *     weighed by how rare each word is among the session's candidates (pseudo-relevance feedback on the pool);
 *   - coverage: the share of the query's distinct terms a candidate's own text holds;
 *   - day spread: each further candidate of a day already listed is discounted (the opposite of `dayShare`).
 *   These three re-sort by the store's score, which leaves out the day's share the store ordered by: a weight
 *   above 0 also drops that order. The next two keep it (a candidate moves only by what it gains or loses):
 *   - question and reply: `rerankSearchCandidates` (what `session.search` runs), its defaults scaled: a
 *     question's discount, its reply's lift, the query's rarer words in a candidate's own text;
 *   - speaker names: a candidate whose own text holds no query term but the speakers' names (the "Name:"
 *     labels of the candidates) is discounted.
 *
 *   cd bench && node --import tsx src/session-search-headroom.ts [--smoke] [--no-postgres]
 */
import {
  candidateCount,
  defaultCandidateReranking,
  rerankSearchCandidates,
  type SearchCandidate,
  type SessionStoreV1,
  type StoredSearchHit,
  selectSearchHits,
} from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { isStopword, planQuery, tokenize } from "@contextblocks/text";
import Database from "better-sqlite3";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { appendConversation } from "./locomo-session.js";
import { type LocomoTurnTimes, locomoTurnTimes } from "./locomo-time.js";
import { markdownTable } from "./markdown.js";
import { optionalPostgres, postgresSessionBackends, type SessionStoreBackend } from "./throwaway-postgres.js";

const limit = 10;
const pooled = 100;
const reranked = 30;
const reaches = [10, 20, 30, 50, 100];

/** One question as asked: the store's candidates, and what scoring needs. */
interface Asked {
  conversation: string;
  question: string;
  candidates: StoredSearchHit[];
  evidence: ReadonlySet<string>;
  terms: ReadonlySet<string>;
}

/** A re-ranking of a question's candidates with one weight, given every question of its session. */
type Reranker = (question: Asked, weight: number, session: SessionWords) => StoredSearchHit[];

interface Family {
  name: string;
  weights: readonly number[];
  rerank: Reranker;
}

/** In how many distinct candidate texts of a session each stem occurs (a stand-in for document frequency). */
interface SessionWords {
  texts: number;
  frequency: ReadonlyMap<string, number>;
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

function sessionWordsOf(asked: readonly Asked[]): SessionWords {
  const seen = new Set<string>();
  const frequency = new Map<string, number>();
  for (const question of asked) {
    for (const candidate of question.candidates) {
      if (seen.has(candidate.id)) continue;
      seen.add(candidate.id);
      for (const stem of contentStems(candidate.text)) frequency.set(stem, (frequency.get(stem) ?? 0) + 1);
    }
  }
  return { texts: seen.size, frequency };
}

const scoreOf = (candidate: StoredSearchHit) => candidate.score ?? 0;
const bestOf = (candidates: readonly StoredSearchHit[]) => Math.max(0, ...candidates.map(scoreOf));
const reordered = (candidates: StoredSearchHit[]) =>
  candidates.sort((left, right) => scoreOf(right) - scoreOf(left));

const feedback: Family = {
  name: "feedback: words of the best 5 candidates lift the candidates sharing them",
  weights: [0, 0.1, 0.2, 0.3, 0.5],
  rerank(question, weight, session) {
    const pool = question.candidates.slice(0, reranked);
    const best = bestOf(pool);
    const rarity = (stem: string) =>
      Math.log((session.texts + 1) / ((session.frequency.get(stem) ?? 0) + 0.5));
    const lift = new Map<string, number>();
    for (const candidate of pool.slice(0, 5)) {
      for (const stem of contentStems(candidate.text)) {
        if (question.terms.has(stem)) continue;
        lift.set(stem, (lift.get(stem) ?? 0) + (best > 0 ? scoreOf(candidate) / best : 0));
      }
    }
    const shared = pool.map((candidate) => {
      let sum = 0;
      // A word only one of the best candidates holds is not feedback; two or more agreeing on it is.
      for (const stem of contentStems(candidate.text)) {
        const agreed = lift.get(stem) ?? 0;
        if (agreed >= 1) sum += agreed * rarity(stem);
      }
      return sum;
    });
    const most = Math.max(1e-9, ...shared);
    return reordered(
      pool.map((candidate, index) => ({
        ...candidate,
        score: scoreOf(candidate) + weight * best * ((shared[index] ?? 0) / most),
      })),
    );
  },
};

const coverage: Family = {
  name: "coverage: the share of the query's terms a candidate's own text holds",
  weights: [0, 0.1, 0.2, 0.3],
  rerank(question, weight) {
    const pool = question.candidates.slice(0, reranked);
    const best = bestOf(pool);
    const size = Math.max(1, question.terms.size);
    return reordered(
      pool.map((candidate) => {
        const stems = contentStems(candidate.text);
        const held = [...question.terms].filter((term) => stems.has(term)).length;
        return { ...candidate, score: scoreOf(candidate) + weight * best * (held / size) };
      }),
    );
  },
};

const daySpread: Family = {
  name: "day spread: each further candidate of a listed day discounted",
  weights: [0, 0.05, 0.1, 0.2],
  rerank(question, weight) {
    const left = question.candidates.slice(0, reranked);
    const listed: StoredSearchHit[] = [];
    const perDay = new Map<string, number>();
    const dayOf = (candidate: StoredSearchHit) => (candidate.createdAt ?? "").slice(0, 10);
    while (left.length > 0) {
      let chosen = 0;
      let chosenScore = Number.NEGATIVE_INFINITY;
      left.forEach((candidate, index) => {
        const score = scoreOf(candidate) * (1 - weight) ** (perDay.get(dayOf(candidate)) ?? 0);
        if (score > chosenScore) {
          chosen = index;
          chosenScore = score;
        }
      });
      const [next] = left.splice(chosen, 1);
      if (next === undefined) break;
      perDay.set(dayOf(next), (perDay.get(dayOf(next)) ?? 0) + 1);
      listed.push({ ...next, score: chosenScore });
    }
    return listed;
  },
};

const questionReply: Family = {
  name: "question and reply: `rerankSearchCandidates`, its defaults scaled by the weight",
  weights: [0, 0.5, 1, 1.5],
  rerank(question, weight) {
    return rerankSearchCandidates(question.question, question.candidates.slice(0, reranked), {
      questionDiscount: defaultCandidateReranking.questionDiscount * weight,
      replyLift: defaultCandidateReranking.replyLift * weight,
      coverageWeight: defaultCandidateReranking.coverageWeight * weight,
    });
  },
};

/** The "Name:" label a turn starts with (as `"<speaker>: <text>"` is stored here), folded to its stems. */
function labelStems(text: string): string[] {
  const colon = text.indexOf(":");
  return colon > 0 && colon < 48 ? tokenize(text.slice(0, colon)).map((token) => token.stem) : [];
}

const speakerNames: Family = {
  name: "speaker names: a candidate holding no query term but the speakers' names discounted",
  weights: [0, 0.15, 0.3, 0.6],
  rerank(question, weight) {
    const pool = question.candidates.slice(0, reranked);
    const names = new Set(pool.flatMap((candidate) => labelStems(candidate.text)));
    const content = [...question.terms].filter((term) => !names.has(term));
    // A query naming no speaker, or only speakers, leaves the order as it is.
    if (weight === 0 || content.length === 0 || content.length === question.terms.size) return pool;
    return keepingPlaces(pool, (candidate) => {
      if ((candidate.matchedBy ?? "text") !== "text") return 0;
      const stems = contentStems(candidate.text);
      return content.some((term) => stems.has(term)) ? 0 : -weight * scoreOf(candidate);
    });
  },
};

/**
 * The candidates moved by `change` (added to each score), the store's order kept where nothing changes: each
 * stands at the best score at or below its place, as `rerankSearchCandidates` does.
 */
function keepingPlaces(
  pool: readonly StoredSearchHit[],
  change: (candidate: StoredSearchHit) => number,
): StoredSearchHit[] {
  let floor = Number.NEGATIVE_INFINITY;
  const places = pool
    .map(scoreOf)
    .reverse()
    .map((score) => (floor = Math.max(floor, score)))
    .reverse();
  return pool
    .map((candidate, index) => ({ candidate, change: change(candidate), place: places[index] ?? 0, index }))
    .sort(
      (left, right) => right.place + right.change - (left.place + left.change) || left.index - right.index,
    )
    .map(({ candidate, change: delta }) => ({ ...candidate, score: scoreOf(candidate) + delta }));
}

const families = [feedback, coverage, daySpread, questionReply, speakerNames];

/** hit@10 of `session.search` over these candidates: the stores' own hit selection. */
function hitAfterSelection(question: Asked, candidates: readonly SearchCandidate[]): boolean {
  return selectSearchHits(candidates, limit).some((hit) => question.evidence.has(hit.id));
}

function reachOf(question: Asked, depth: number): boolean {
  return question.candidates.slice(0, depth).some((candidate) => question.evidence.has(candidate.id));
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const average = mean(values);
  return Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / (values.length - 1));
}
const meanAndSpread = (values: readonly number[]) =>
  `${mean(values).toFixed(3)} ± ${spread(values).toFixed(3)}`;

/** Leave-one-conversation-out over a family's weights: the weight with the best hit@10 on the others. */
function leaveOneOut(
  byConversation: ReadonlyMap<string, Asked[]>,
  family: Family,
): { folds: number[]; baseline: number[]; chosen: number[] } {
  const hits = new Map<string, number[]>();
  for (const [name, asked] of byConversation) {
    const session = sessionWordsOf(asked);
    hits.set(
      name,
      family.weights.map(
        (weight) =>
          asked.filter((question) => hitAfterSelection(question, family.rerank(question, weight, session)))
            .length,
      ),
    );
  }
  const sizeOf = (name: string) => byConversation.get(name)?.length ?? 0;
  const folds: number[] = [];
  const baseline: number[] = [];
  const chosen: number[] = [];
  for (const heldOut of byConversation.keys()) {
    let best = 0;
    let bestShare = -1;
    family.weights.forEach((_, index) => {
      let hit = 0;
      let asked = 0;
      for (const [name, counts] of hits) {
        if (name === heldOut) continue;
        hit += counts[index] ?? 0;
        asked += sizeOf(name);
      }
      const share = hit / Math.max(asked, 1);
      // Ties keep the smaller weight: a change must earn its place.
      if (share > bestShare + 1e-12) {
        best = index;
        bestShare = share;
      }
    });
    const size = Math.max(sizeOf(heldOut), 1);
    folds.push((hits.get(heldOut)?.[best] ?? 0) / size);
    baseline.push((hits.get(heldOut)?.[0] ?? 0) / size);
    chosen.push(family.weights[best] ?? 0);
  }
  return { folds, baseline, chosen };
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
      asked.push({
        conversation: conversation.name,
        question: question.question,
        candidates: await search.call(store, question.question, pooled),
        evidence: new Set(question.evidence.map(idOf)),
        terms: new Set(planQuery(question.question)?.terms.map((term) => term.stem) ?? []),
      });
    }
    byConversation.set(conversation.name, asked);
  }
  return byConversation;
}

export async function run(
  options: { smoke?: boolean; postgres?: boolean } = {},
): Promise<{ markdown: string }> {
  const conversations = readLocomo(options.smoke === true);
  if (conversations === null) {
    return { markdown: `Skipped: ${locomoDirectory.pathname} is not on this machine.` };
  }
  const turnTimes = locomoTurnTimes(conversations);
  const databases = new Map<string, Database.Database>();
  const backends: SessionStoreBackend[] = [
    {
      name: "SQLite",
      store(sessionId) {
        const database = databases.get(sessionId) ?? new Database(":memory:");
        databases.set(sessionId, database);
        return new SqliteSessionStore(database, { sessionId });
      },
    },
  ];
  const postgres = await optionalPostgres(options.postgres !== false);
  backends.push(...postgresSessionBackends(postgres));
  const note = postgres.skipped === "" ? "" : `\n\n${postgres.skipped}`;
  const reachRows: string[][] = [];
  const rerankRows: string[][] = [];
  try {
    for (const backend of backends) {
      for (const times of [true, false]) {
        const byConversation = await askAll(backend, conversations, times ? turnTimes : null);
        const all = [...byConversation.values()].flat();
        const share = (count: number) => (count / Math.max(all.length, 1)).toFixed(3);
        const selected = all.filter((question) =>
          hitAfterSelection(question, question.candidates.slice(0, candidateCount(limit, 1_000))),
        ).length;
        reachRows.push([
          backend.name,
          times ? "yes" : "no",
          ...reaches.map((depth) => share(all.filter((question) => reachOf(question, depth)).length)),
          share(selected),
        ]);
        for (const family of families) {
          const { folds, baseline, chosen } = leaveOneOut(byConversation, family);
          rerankRows.push([
            backend.name,
            times ? "yes" : "no",
            family.name,
            meanAndSpread(baseline),
            meanAndSpread(folds),
            chosen.join(", "),
          ]);
        }
      }
    }
  } finally {
    await postgres.close();
  }
  const questions = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  return {
    markdown:
      [
        `${conversations.length} conversation(s), ${questions} questions, each store with its default ranking. ` +
          "Reach: the share of questions with an evidence turn among the store's first k candidates; hit@10: after " +
          "the stores' hit selection (what `session.search` returns).",
        "",
        markdownTable(
          ["backend", "message times", ...reaches.map((depth) => `reach ${depth}`), "hit@10 (selected)"],
          reachRows,
          2,
        ),
        "",
        `Re-ranking the first ${reranked} candidates before the selection, each family's weight chosen by ` +
          "leave-one-conversation-out on hit@10 (ties keep the smaller weight): fold mean ± spread, beside the " +
          "store's own order on the same folds.",
        "",
        markdownTable(
          ["backend", "message times", "re-ranker", "store's order", "re-ranked (LOO)", "weight per fold"],
          rerankRows,
          3,
        ),
      ].join("\n") + note,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    postgres: !process.argv.includes("--no-postgres"),
  });
  console.log(result.markdown);
}
