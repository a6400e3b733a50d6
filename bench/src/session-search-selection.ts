/**
 * Session search on LoCoMo, precision beside recall, with the hit selection's settings chosen by
 * leave-one-conversation-out. Built like `locomo-retrieval` (every turn one message `"<speaker>: <text>"`,
 * roles alternating, `createdAt` its session's time when `times` is on; one question one search of 10 hits),
 * on every backend: memory, SQLite (lean and keyed layouts) and Postgres (a throwaway cluster, when one can be
 * started here).
 *
 * A setting is a ranking (the SQL stores' `searchRanking`: the share of the turns around a message,
 * `contextWeight` = `afterShare`, the speaker's boost, the day's share, the boost of a turn that says when
 * for a question that asks when, the depth of SQLite's candidate pool; the near turns' share stays at its
 * default) under the stores' own hit
 * selection (`weakShare`, `neighbourShare`: not tuned, so hits stay readable), each with a re-ranking of the
 * candidates before it (`rerankSearchCandidates`: a question's discount, its reply's lift, the query's coverage;
 * every store runs it). The setting chosen on all
 * conversations is what the stores' defaults follow. Each store ranks its candidates once per question and ranking
 * (`store.search(question, candidateCount(10))`, a store over the same database per ranking); then
 * `selectSearchHits` (what `session.search` runs) makes hits of them under each selection. For each held-out
 * conversation the setting with the best hit@10 on the other conversations (ties: the better precision, then
 * the earlier setting) is scored on it; the figures are the fold mean and spread (sample standard deviation
 * over the folds), and per LoCoMo category over the held-out questions. Never a figure from a setting chosen
 * on the conversation it is scored on. The memory store has one ranking (its defaults). Without message times
 * every turn carries the day it was written (one day here), so the day's share shifts every hit alike and
 * only its default is run.
 *
 * - hit@10: an evidence turn among the hits' ids (context turns are not counted);
 * - precision: the share of hits whose own text holds a query term (stemmed, stopwords aside, as planned);
 *   and past the label: the same counting only the text after a leading "Name:" speaker label;
 * - tokens per call: `estimateTokens` of the hits' text and their context.
 *
 *   cd bench && node --import tsx src/session-search-selection.ts [--smoke] [--no-postgres | --postgres-only]
 *     [--backends=memory,lean,keyed,postgres]
 */
import { PostgresSessionStore } from "@contextblocks/postgres";
import { defaultPostgresSearchRanking } from "@contextblocks/postgres/store-kit";
import { InMemorySessionStore, InMemorySessions } from "@contextblocks/sessions/memory";
import {
  type CandidateReranking,
  candidateCount,
  defaultCandidateReranking,
  defaultSearchRanking,
  neighbourShare,
  rerankSearchCandidates,
  type SearchCandidate,
  type SearchRanking,
  type SessionStoreV1,
  type StoredSearchHit,
  selectSearchHits,
  weakShare,
} from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { planQuery } from "@contextblocks/text";
import Database from "better-sqlite3";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { locomoCategoryNames } from "./locomo-scoring.js";
import { appendConversation } from "./locomo-session.js";
import { type LocomoTurnTimes, locomoTurnTimes } from "./locomo-time.js";
import { markdownTable } from "./markdown.js";
import { type HitFigures, hitFiguresOf } from "./search-hit-figures.js";
import { optionalPostgres } from "./throwaway-postgres.js";

const limit = 10;
// The hit selection is the stores' own, not tuned: a neighbour-only turn is a hit only near the best, and
// weak matches are cut, so hits stay readable. Tuned for hit@10 alone, it would keep every neighbour.
const weakShares = [weakShare];
const neighbourShares = [neighbourShare];

/**
 * The re-rankings of the candidates tried before the selection (`rerankSearchCandidates`): a question's
 * discount, the lift of its reply, the query's rarity-weighed coverage. All zero first: on a tie the store's
 * own order stays.
 */
const rerankings: CandidateReranking[] = [0, 0.2, 0.4].flatMap((questionDiscount) =>
  [0, 0.2, 0.4].flatMap((replyLift) =>
    [0, 0.2].map((coverageWeight) => ({ questionDiscount, replyLift, coverageWeight })),
  ),
);

interface Selection {
  weakShare: number;
  neighbourShare: number;
  reranking: CandidateReranking;
}
const selections: Selection[] = rerankings.flatMap((reranking) =>
  weakShares.flatMap((weak) =>
    neighbourShares.map((near) => ({ weakShare: weak, neighbourShare: near, reranking })),
  ),
);

/**
 * The rankings tried on the SQL stores: round values, the turns after a message weighed as those before. The
 * turns around a message weigh at most 0.5: at 0.7 a turn near a match outranks one that holds the word on a
 * short chat (the conformance suite's precise-hits case), whatever it adds to hit@10. The depth of the SQL
 * stores' candidate pool (`extraCandidates`: the best matches by bm25 ranked beyond the candidates asked for)
 * is tried at depths each backend can afford: 10 and 40 on SQLite (rows a Durable Object bills), 40 and 160 on
 * Postgres (its presence-only scores tie more, and a shallow pool cuts among the ties). A boost of 0 for a turn that says when
 * (`datedBoost`) is not tried: no backend chose it on any fold before the depth joined the grid, which keeps
 * the grid at its former size (16 rankings with times, 8 without).
 */
function rankingsOf(times: boolean, depths: readonly number[]): Partial<SearchRanking>[] {
  const rankings: Partial<SearchRanking>[] = [];
  // The near turns' share stays at its default: it costs a Durable Object rows on every search.
  for (const share of [0.3, 0.5])
    for (const speakerBoost of [0, 0.5])
      for (const nearShare of [defaultSearchRanking.nearShare])
        for (const dayShare of times ? [0, 0.4] : [defaultSearchRanking.dayShare])
          for (const datedBoost of [0.5])
            for (const extraCandidates of depths)
              rankings.push({
                contextWeight: share,
                afterShare: share,
                speakerBoost,
                nearShare,
                dayShare,
                datedBoost,
                extraCandidates,
              });
  return rankings;
}

function rankingName(ranking: Partial<SearchRanking>): string {
  if (Object.keys(ranking).length === 0) return "defaults";
  return `turns ${ranking.contextWeight}, speaker ${ranking.speakerBoost}, near ${ranking.nearShare}, day ${ranking.dayShare}, dated ${ranking.datedBoost}, extra ${ranking.extraCandidates}`;
}

interface Setting {
  ranking: number;
  selection: Selection;
}

/** One question's candidates as its store ranked them under each ranking, with what scoring needs. */
interface Asked {
  question: string;
  candidates: SearchCandidate[][];
  evidence: ReadonlySet<string>;
  stems: ReadonlySet<string>;
  category: number;
}

interface Figures {
  hit: number;
  precision: number;
  /** The precision counting only the text after a leading "Name:" label (`HitFigures.holdingPastLabel`). */
  pastLabel: number;
  tokens: number;
}

function scoreOf(question: Asked, setting: Setting): HitFigures {
  const candidates = rerankSearchCandidates(
    question.question,
    question.candidates[setting.ranking] ?? [],
    setting.selection.reranking,
  );
  const results = selectSearchHits(candidates, limit, setting.selection);
  return hitFiguresOf(results, question.evidence, question.stems);
}

function figuresOf(scored: readonly HitFigures[]): Figures {
  let hits = 0;
  let shown = 0;
  let holding = 0;
  let pastLabel = 0;
  let tokens = 0;
  for (const each of scored) {
    if (each.hit) hits++;
    shown += each.shown;
    holding += each.holding;
    pastLabel += each.holdingPastLabel;
    tokens += each.tokens;
  }
  const count = Math.max(scored.length, 1);
  return {
    hit: hits / count,
    precision: shown === 0 ? 1 : holding / shown,
    pastLabel: shown === 0 ? 1 : pastLabel / shown,
    tokens: tokens / count,
  };
}

/** The better setting on the training folds: hit@10, then precision, then the stricter (later in the grid). */
function better(left: Figures, right: Figures): boolean {
  if (left.hit !== right.hit) return left.hit > right.hit;
  return left.precision >= right.precision;
}

interface Fold {
  conversation: string;
  chosen: Setting;
  figures: Figures;
  /** The held-out questions' hits under the chosen setting, by category: [hits, questions]. */
  categories: Map<number, [number, number]>;
}

/**
 * The folds, and the setting the same choice makes on every conversation: what the stores' defaults should
 * be (its figures are tuned on what they score, so they are shown for that choice only, never as a result).
 */
function leaveOneOut(
  byConversation: ReadonlyMap<string, Asked[]>,
  rankings: number,
  selectionsTried: readonly Selection[] = selections,
): { folds: Fold[]; onAll: { setting: Setting; figures: Figures } } {
  const grid: Setting[] = [];
  for (let ranking = 0; ranking < rankings; ranking++)
    for (const selection of selectionsTried) grid.push({ ranking, selection });
  // Every question scored once under every setting; a fold sums the others' scores.
  const scores = new Map<string, HitFigures[][]>();
  for (const [name, asked] of byConversation) {
    scores.set(
      name,
      grid.map((setting) => asked.map((question) => scoreOf(question, setting))),
    );
  }
  // The setting with the best figures over the given conversations' questions.
  const chooseOn = (included: (name: string) => boolean) => {
    const training = (index: number) =>
      [...scores].filter(([name]) => included(name)).flatMap(([, bySetting]) => bySetting[index] ?? []);
    let chosen = 0;
    let best = figuresOf(training(0));
    for (let index = 1; index < grid.length; index++) {
      const figures = figuresOf(training(index));
      if (better(figures, best) && !same(figures, best)) {
        best = figures;
        chosen = index;
      }
    }
    return { chosen, figures: best };
  };
  const onAll = chooseOn(() => true);
  const folds: Fold[] = [];
  for (const [heldOut, asked] of byConversation) {
    const { chosen } = chooseOn((name) => name !== heldOut);
    const held = scores.get(heldOut)?.[chosen] ?? [];
    const categories = new Map<number, [number, number]>();
    asked.forEach((question, index) => {
      const tally = categories.get(question.category) ?? [0, 0];
      tally[0] += held[index]?.hit === true ? 1 : 0;
      tally[1]++;
      categories.set(question.category, tally);
    });
    folds.push({
      conversation: heldOut,
      chosen: grid[chosen] as Setting,
      figures: figuresOf(held),
      categories,
    });
  }
  return { folds, onAll: { setting: grid[onAll.chosen] as Setting, figures: onAll.figures } };
}

const same = (left: Figures, right: Figures) => left.hit === right.hit && left.precision === right.precision;

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const average = mean(values);
  return Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / (values.length - 1));
}
const meanAndSpread = (values: readonly number[], digits: number) =>
  `${mean(values).toFixed(digits)} ± ${spread(values).toFixed(digits)}`;

interface Backend {
  name: string;
  /** A store of the session; `ranking` given: a store over the same database ranking with it. */
  store(conversation: string, ranking?: Partial<SearchRanking>): SessionStoreV1;
  /** Whether the store takes a `searchRanking` (the SQL stores). */
  ranks: boolean;
  /** The store's own default ranking (what it ranks with when given none). */
  defaults: Readonly<SearchRanking>;
  /** The depths of its candidate pool tried (`extraCandidates`), each bounded by what it costs there. */
  depths: readonly number[];
}

async function askAll(
  backend: Backend,
  conversations: readonly LocomoConversation[],
  turnTimes: LocomoTurnTimes | null,
  rankings: readonly Partial<SearchRanking>[],
): Promise<Map<string, Asked[]>> {
  const times = turnTimes !== null;
  const byConversation = new Map<string, Asked[]>();
  for (const conversation of conversations) {
    const sessionId = `${conversation.name}${times ? "-t" : ""}`;
    const store = backend.store(sessionId);
    const idOf = await appendConversation(store, conversation, sessionId, turnTimes?.get(conversation.name));
    const asked: Asked[] = conversation.questions.map((question) => ({
      question: question.question,
      candidates: [],
      evidence: new Set(question.evidence.map(idOf)),
      stems: new Set(planQuery(question.question)?.terms.map((term) => term.stem) ?? []),
      category: question.category,
    }));
    for (const ranking of rankings) {
      const ranked = backend.store(sessionId, ranking);
      const search = ranked.search as NonNullable<SessionStoreV1["search"]>;
      for (const [index, question] of conversation.questions.entries()) {
        const candidates: StoredSearchHit[] = await search.call(
          ranked,
          question.question,
          candidateCount(limit, 1_000),
        );
        asked[index]?.candidates.push(candidates);
      }
    }
    byConversation.set(conversation.name, asked);
  }
  return byConversation;
}

export interface SelectionResult {
  markdown: string;
}

/** A SQLite store per session, each session its own database, a store per ranking over it. */
function sqliteBackend(name: string, layout: "lean" | "keyed"): Backend {
  const databases = new Map<string, Database.Database>();
  return {
    name,
    ranks: true,
    defaults: defaultSearchRanking,
    // Each candidate is about one row read on a Durable Object: 10 and 40 keep a search near 200 rows.
    depths: [10, 40],
    store(sessionId, ranking) {
      let database = databases.get(sessionId);
      if (database === undefined) {
        database = new Database(":memory:");
        databases.set(sessionId, database);
      }
      return new SqliteSessionStore(database, {
        sessionId,
        newDatabaseLayout: layout,
        ...(ranking === undefined ? {} : { searchRanking: ranking }),
      });
    },
  };
}

const categoryOrder = [1, 2, 3, 4, 5];

export async function run(
  options: { smoke?: boolean; postgres?: boolean; postgresOnly?: boolean; backends?: string[] } = {},
): Promise<SelectionResult> {
  const conversations = readLocomo(options.smoke === true);
  if (conversations === null) {
    return { markdown: `Skipped: ${locomoDirectory.pathname} is not on this machine.` };
  }
  const turnTimes = locomoTurnTimes(conversations);
  const wanted = (id: string) => options.backends === undefined || options.backends.includes(id);
  const local: Backend[] = [];
  if (wanted("memory")) {
    const sessions = new InMemorySessions();
    local.push({
      name: "memory",
      ranks: false,
      defaults: defaultSearchRanking,
      depths: [],
      store: (sessionId) => new InMemorySessionStore({ sessionId, sessions }),
    });
  }
  if (wanted("lean")) local.push(sqliteBackend("SQLite (lean)", "lean"));
  if (wanted("keyed")) local.push(sqliteBackend("SQLite (keyed, the Durable Object layout)", "keyed"));
  const backends = options.postgresOnly === true ? [] : local;
  const postgres = await optionalPostgres(options.postgres !== false && wanted("postgres"));
  const connected = postgres.client;
  if (connected !== undefined) {
    backends.push({
      name: "Postgres",
      ranks: true,
      defaults: defaultPostgresSearchRanking,
      // Ranking every match gained nothing over 160 (tried at 1,000), for about 1.7 times the time at 5,520
      // messages.
      depths: [40, 160],
      store: (sessionId, ranking) =>
        new PostgresSessionStore(connected, {
          sessionId,
          ...(ranking === undefined ? {} : { searchRanking: ranking }),
        }),
    });
  }
  const postgresNote = postgres.skipped === "" ? "" : `\n${postgres.skipped}`;
  const rows: string[][] = [];
  const categoryRows: string[][] = [];
  const choices: string[] = [];
  try {
    for (const backend of backends) {
      for (const times of [true, false]) {
        const rankings = backend.ranks ? rankingsOf(times, backend.depths) : [{}];
        const asked = await askAll(backend, conversations, times ? turnTimes : null, rankings);
        const { folds, onAll } = leaveOneOut(asked, rankings.length);
        // The same choice with the store's own order (no re-ranking), on the same folds: the paired baseline.
        const unranked = leaveOneOut(
          asked,
          rankings.length,
          selections.filter(({ reranking }) => Object.values(reranking).every((weight) => weight === 0)),
        ).folds;
        const all = [...asked.values()].flat();
        // The store's default ranking with the default selection, over every question (for comparison).
        const defaultsAt = Math.max(
          0,
          rankings.findIndex(
            (ranking) =>
              Object.keys(ranking).length === 0 ||
              (ranking.contextWeight === backend.defaults.contextWeight &&
                ranking.afterShare === backend.defaults.afterShare &&
                ranking.speakerBoost === backend.defaults.speakerBoost &&
                ranking.nearShare === backend.defaults.nearShare &&
                ranking.dayShare === backend.defaults.dayShare &&
                ranking.datedBoost === backend.defaults.datedBoost &&
                ranking.extraCandidates === backend.defaults.extraCandidates),
          ),
        );
        const defaults = figuresOf(
          all.map((question) =>
            scoreOf(question, {
              ranking: defaultsAt,
              selection: { weakShare, neighbourShare, reranking: defaultCandidateReranking },
            }),
          ),
        );
        rows.push([
          backend.name,
          times ? "yes" : "no",
          meanAndSpread(
            folds.map((fold) => fold.figures.hit),
            3,
          ),
          meanAndSpread(
            folds.map((fold) => fold.figures.precision),
            3,
          ),
          meanAndSpread(
            folds.map((fold) => fold.figures.pastLabel),
            3,
          ),
          meanAndSpread(
            folds.map((fold) => fold.figures.tokens),
            0,
          ),
          `${defaults.hit.toFixed(3)} / ${defaults.precision.toFixed(3)} / ${defaults.tokens.toFixed(0)}`,
          `${meanAndSpread(
            unranked.map((fold) => fold.figures.hit),
            3,
          )} / ${mean(unranked.map((fold) => fold.figures.precision)).toFixed(3)}`,
        ]);
        categoryRows.push([
          backend.name,
          times ? "yes" : "no",
          ...categoryOrder.map((category) => {
            let hits = 0;
            let questions = 0;
            for (const fold of folds) {
              const [foldHits, foldQuestions] = fold.categories.get(category) ?? [0, 0];
              hits += foldHits;
              questions += foldQuestions;
            }
            return questions === 0 ? "n/a" : (hits / questions).toFixed(3);
          }),
        ]);
        const settingName = (setting: Setting) =>
          `[${rankingName(rankings[setting.ranking] ?? {})}; ` +
          `${setting.selection.weakShare}/${setting.selection.neighbourShare}; ` +
          `question ${setting.selection.reranking.questionDiscount}, reply ${setting.selection.reranking.replyLift}, ` +
          `coverage ${setting.selection.reranking.coverageWeight}]`;
        choices.push(
          `${backend.name}, times ${times ? "on" : "off"}: ${folds
            .map((fold) => `${fold.conversation} ${settingName(fold.chosen)}`)
            .join(", ")}; on all: ${settingName(onAll.setting)}`,
        );
      }
    }
  } finally {
    await postgres.close();
  }
  const questions = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  const markdown = [
    `${conversations.length} conversation(s), ${questions} questions${options.smoke === true ? " (smoke)" : ""}. ` +
      "Leave-one-conversation-out over the ranking (SQL stores) and the re-ranking of the candidates (every store; " +
      "the hit selection is the stores' own): fold mean ± spread " +
      "(sample standard deviation over the folds) of the setting chosen on the other conversations. " +
      "precision = share of hits whose own text holds a query term; past the label: the same share counting " +
      'only the text after a leading "Name:" speaker label (a question naming a speaker finds that word in ' +
      "the label of half the turns); tokens = the hits' text and their " +
      "context per call. The defaults' figures (the store's default ranking and selection) are over every " +
      "question, for comparison.",
    "",
    markdownTable(
      [
        "backend",
        "message times",
        "hit@10 (LOO)",
        "precision (LOO)",
        "precision past the label (LOO)",
        "tokens per call (LOO)",
        `defaults (selection ${weakShare}/${neighbourShare}): hit / precision / tokens`,
        "without re-ranking (LOO): hit / precision",
      ],
      rows,
    ),
    "",
    "hit@10 per LoCoMo category, held-out questions under the setting chosen without them:",
    "",
    markdownTable(
      [
        "backend",
        "message times",
        ...categoryOrder.map((category) => `${locomoCategoryNames[category] ?? category} (${category})`),
      ],
      categoryRows,
    ),
    "",
    "Settings chosen per held-out conversation [ranking; weakShare/neighbourShare; re-ranking], and on all " +
      "conversations (the choice the stores' defaults follow):",
    "",
    ...choices.map((line) => `- ${line}`),
  ].join("\n");
  return { markdown: markdown + postgresNote };
}

/** Each turn's time: its session's (LoCoMo's `session_N_date_time`, read by `locomo-time.ts`). */
function backendsArgument(): { backends?: string[] } {
  const given = process.argv.find((argument) => argument.startsWith("--backends="));
  return given === undefined ? {} : { backends: given.slice("--backends=".length).split(",") };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    postgres: !process.argv.includes("--no-postgres"),
    postgresOnly: process.argv.includes("--postgres-only"),
    ...backendsArgument(),
  });
  console.log(result.markdown);
}
