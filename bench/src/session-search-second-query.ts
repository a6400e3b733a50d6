/**
 * Whether a second retrieval with the question plus the words its first candidates share finds evidence the
 * question's words alone did not (query expansion by pseudo-relevance feedback), and what it costs. Built like
 * `session-search-selection` (every turn one message `"<speaker>: <text>"`, roles alternating, `createdAt` its
 * session's time when `times` is on), each store with its default ranking and re-ranking.
 *
 * Per question: the store's `candidateCount(10)` candidates for the question; the feedback words of its best
 * five text matches (a stem not in the query, held by at least two of them and by at most 30% of the
 * candidates, not a number; the three with the most holders among the five times their rarity among the
 * candidates); a second search of the question and those words; the two lists merged (each candidate at its
 * better score, each list's scores as shares of its best, the second's times `secondShare`; a candidate the
 * first search matched by its own text stays so, and one only the second found counts as matched by its own
 * text only when that holds a word of the question: the added words alone never make a text match).
 * `rerankSearchCandidates` and `selectSearchHits` (what `session.search` runs) then make hits of each.
 *
 * - reach 30: an evidence turn among the candidates (the first's, the second's, the merged list's);
 * - hit@10, precision (the share of hits whose own text holds a query term), tokens per call;
 * - the median time of the first and of the second search, paired in one process.
 *
 * Nothing here is chosen by leave-one-conversation-out: each `secondShare` is shown over every question, so the
 * best of them is an upper bound of what the merge gives.
 *
 *   cd bench && node --import tsx src/session-search-second-query.ts [--smoke] [--no-postgres | --postgres-only]
 */
import {
  candidateCount,
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
import { optionalPostgres, postgresSessionBackends, type SessionStoreBackend } from "./throwaway-postgres.js";

const limit = 10;
/** The best text matches the feedback words are read from. */
const feedbackDepth = 5;
/** A feedback word is held by at least this many of them. */
const feedbackHolders = 2;
/** ... and by at most this share of the candidates (a word most candidates hold tells little). */
const feedbackPoolShare = 0.3;
/** How many feedback words the second search adds to the question. */
const feedbackWords = 3;
/** The second search's scores, as shares of its best, weigh this much against the first's. */
const secondShares = [0.5, 0.8, 1];

/** The candidates' own-text stems, stopwords aside, kept across questions (a session's texts repeat). */
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

/** The words the best text matches share and the query lacks, best first (as written, for a query). */
function feedbackWordsOf(question: string, candidates: readonly SearchCandidate[]): string[] {
  const asked = new Set(planQuery(question)?.terms.map((term) => term.stem) ?? []);
  const best = candidates.filter((candidate) => candidate.matchedBy !== "neighbours").slice(0, feedbackDepth);
  const holders = new Map<string, number>();
  const written = new Map<string, string>();
  for (const candidate of best) {
    for (const stem of contentStems(candidate.text)) {
      if (!asked.has(stem)) holders.set(stem, (holders.get(stem) ?? 0) + 1);
    }
    for (const token of tokenize(candidate.text)) {
      if (!written.has(token.stem)) written.set(token.stem, token.folded);
    }
  }
  const weighed: [string, number][] = [];
  for (const [stem, count] of holders) {
    if (count < feedbackHolders || /^\d+$/.test(stem)) continue;
    const holding = candidates.filter((candidate) => contentStems(candidate.text).has(stem)).length;
    if (holding > feedbackPoolShare * candidates.length) continue;
    weighed.push([stem, count * Math.log((candidates.length + 1) / (holding + 0.5))]);
  }
  return weighed
    .sort((left, right) => right[1] - left[1])
    .slice(0, feedbackWords)
    .map(([stem]) => written.get(stem) ?? stem);
}

/** Both lists as one: each candidate at its better share of its list's best; text matches stay the first's. */
function merged(
  first: readonly SearchCandidate[],
  second: readonly SearchCandidate[],
  secondShare: number,
  asked: ReadonlySet<string>,
): SearchCandidate[] {
  const shares = (list: readonly SearchCandidate[], weight: number) => {
    const best = Math.max(0, ...list.map((candidate) => candidate.score ?? 0));
    return list.map((candidate) => ({
      ...candidate,
      score: best > 0 ? (weight * (candidate.score ?? 0)) / best : 0,
    }));
  };
  const byId = new Map<string, SearchCandidate>();
  for (const candidate of shares(first, 1)) byId.set(candidate.id, candidate);
  for (const candidate of shares(second, secondShare)) {
    const had = byId.get(candidate.id);
    if (had === undefined) {
      // Found by the second search only: matched by its own text only when that holds a word of the question.
      const ownWords = [...contentStems(candidate.text)].some((stem) => asked.has(stem));
      byId.set(candidate.id, ownWords ? candidate : { ...candidate, matchedBy: "neighbours" });
    } else if ((candidate.score ?? 0) > (had.score ?? 0)) {
      byId.set(candidate.id, { ...candidate, matchedBy: had.matchedBy ?? "text" });
    }
  }
  return [...byId.values()].sort((left, right) => (right.score ?? 0) - (left.score ?? 0));
}

interface Tally {
  questions: number;
  reach: { first: number; second: number; merged: number };
  first: HitFigures[];
  merged: HitFigures[][];
  firstMilliseconds: number[];
  secondMilliseconds: number[];
  expanded: number;
}

async function askAll(
  backend: SessionStoreBackend,
  conversations: readonly LocomoConversation[],
  turnTimes: LocomoTurnTimes | null,
): Promise<Tally> {
  const tally: Tally = {
    questions: 0,
    reach: { first: 0, second: 0, merged: 0 },
    first: [],
    merged: secondShares.map(() => []),
    firstMilliseconds: [],
    secondMilliseconds: [],
    expanded: 0,
  };
  const count = candidateCount(limit, 1_000);
  for (const conversation of conversations) {
    const sessionId = `${conversation.name}${turnTimes === null ? "" : "-t"}`;
    const store = backend.store(sessionId);
    const idOf = await appendConversation(store, conversation, sessionId, turnTimes?.get(conversation.name));
    const search = store.search as NonNullable<SessionStoreV1["search"]>;
    for (const question of conversation.questions) {
      const evidence = new Set(question.evidence.map(idOf));
      const stems = new Set(planQuery(question.question)?.terms.map((term) => term.stem) ?? []);
      let started = performance.now();
      const first: SearchCandidate[] = await search.call(store, question.question, count);
      tally.firstMilliseconds.push(performance.now() - started);
      const words = feedbackWordsOf(question.question, first);
      started = performance.now();
      const second: SearchCandidate[] =
        words.length === 0
          ? first
          : await search.call(store, `${question.question} ${words.join(" ")}`, count);
      tally.secondMilliseconds.push(words.length === 0 ? 0 : performance.now() - started);
      if (words.length > 0) tally.expanded++;
      const reaches = (list: readonly SearchCandidate[]) =>
        list.some((candidate) => evidence.has(candidate.id));
      const hitsOf = (list: readonly SearchCandidate[]) =>
        hitFiguresOf(
          selectSearchHits(rerankSearchCandidates(question.question, list), limit),
          evidence,
          stems,
        );
      tally.questions++;
      tally.reach.first += Number(reaches(first));
      tally.reach.second += Number(reaches(second));
      tally.first.push(hitsOf(first));
      secondShares.forEach((share, index) => {
        const list = merged(first, second, share, stems);
        if (index === 0) tally.reach.merged += Number(reaches(list));
        tally.merged[index]?.push(hitsOf(list));
      });
    }
  }
  return tally;
}

function figures(scored: readonly HitFigures[]): string {
  let hits = 0;
  let shown = 0;
  let holding = 0;
  let tokens = 0;
  for (const each of scored) {
    hits += Number(each.hit);
    shown += each.shown;
    holding += each.holding;
    tokens += each.tokens;
  }
  const count = Math.max(1, scored.length);
  return `${(hits / count).toFixed(3)} / ${(shown === 0 ? 1 : holding / shown).toFixed(3)} / ${(tokens / count).toFixed(0)}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export async function run(
  options: { smoke?: boolean; postgres?: boolean; postgresOnly?: boolean } = {},
): Promise<{ markdown: string }> {
  const conversations = readLocomo(options.smoke === true);
  if (conversations === null) {
    return { markdown: `Skipped: ${locomoDirectory.pathname} is not on this machine.` };
  }
  const turnTimes = locomoTurnTimes(conversations);
  const backends: SessionStoreBackend[] = [];
  if (options.postgresOnly !== true) {
    const databases = new Map<string, Database.Database>();
    backends.push({
      name: "SQLite",
      store(sessionId) {
        let database = databases.get(sessionId);
        if (database === undefined) {
          database = new Database(":memory:");
          databases.set(sessionId, database);
        }
        return new SqliteSessionStore(database, { sessionId, newDatabaseLayout: "lean" });
      },
    });
  }
  const postgres = await optionalPostgres(options.postgres !== false);
  backends.push(...postgresSessionBackends(postgres));
  const postgresNote = postgres.skipped === "" ? "" : `\n${postgres.skipped}`;
  const rows: string[][] = [];
  try {
    for (const backend of backends) {
      for (const times of [true, false]) {
        const tally = await askAll(backend, conversations, times ? turnTimes : null);
        const share = (value: number) => (value / Math.max(1, tally.questions)).toFixed(3);
        const first = median(tally.firstMilliseconds);
        const second = median(tally.secondMilliseconds);
        rows.push([
          backend.name,
          times ? "yes" : "no",
          `${tally.expanded} of ${tally.questions}`,
          `${share(tally.reach.first)} / ${share(tally.reach.second)} / ${share(tally.reach.merged)}`,
          figures(tally.first),
          ...tally.merged.map(figures),
          `${first.toFixed(2)} / ${second.toFixed(2)} (${((first + second) / Math.max(first, 1e-9)).toFixed(2)}×)`,
        ]);
      }
    }
  } finally {
    await postgres.close();
  }
  const questions = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  const markdown = [
    `${conversations.length} conversation(s), ${questions} questions${options.smoke === true ? " (smoke)" : ""}. ` +
      `Each store with its default ranking and re-ranking, ${candidateCount(limit, 1_000)} candidates a search. ` +
      `A second search adds to the question up to ${feedbackWords} words that at least ${feedbackHolders} of the ` +
      `first search's best ${feedbackDepth} text matches hold and at most ${feedbackPoolShare * 100}% of its ` +
      "candidates; the merged list takes each candidate at its better share of its list's best score, the " +
      "second's weighed by the share named. Over every question (nothing chosen by leave-one-out: the best " +
      "column is an upper bound). hit / precision / tokens: hit@10 after the hit selection, the share of hits " +
      "holding a query term, the hits' text and context per call.",
    "",
    markdownTable(
      [
        "backend",
        "message times",
        "questions expanded",
        "reach 30: first / second / merged",
        "first search: hit / precision / tokens",
        ...secondShares.map((share) => `merged, second at ${share}: hit / precision / tokens`),
        "median ms: first / second search (both against the first)",
      ],
      rows,
    ),
  ].join("\n");
  return { markdown: markdown + postgresNote };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    postgres: !process.argv.includes("--no-postgres"),
    postgresOnly: process.argv.includes("--postgres-only"),
  });
  console.log(result.markdown);
}
