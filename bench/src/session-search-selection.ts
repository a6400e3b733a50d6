/**
 * Session search on LoCoMo, precision beside recall, with the hit selection's settings chosen by
 * leave-one-conversation-out. Built like `locomo-retrieval` (every turn one message `"<speaker>: <text>"`,
 * roles alternating, `createdAt` its session's time when `times` is on; one question one search of 10 hits),
 * on every backend: memory, SQLite (lean and keyed layouts) and Postgres (a throwaway cluster, when one can be
 * started here).
 *
 * Each store ranks its candidates once per question (`store.search(question, candidateCount(10))`); then
 * `selectSearchHits` (what `session.search` runs) makes hits of them under each setting of the grid
 * (`weakShare` × `neighbourShare`). For each held-out conversation the setting with the best hit@10 on the
 * other conversations (ties: the better precision, then the stricter setting) is scored on it; the figures
 * are the fold mean and spread (sample standard deviation over the folds). Never a figure from a setting
 * chosen on the conversation it is scored on.
 *
 * - hit@10: an evidence turn among the hits' ids (context turns are not counted);
 * - precision: the share of hits whose own text holds a query term (stemmed, stopwords aside, as planned);
 * - tokens per call: `estimateTokens` of the hits' text and their context.
 *
 *   cd bench && node --import tsx src/session-search-selection.ts [--smoke] [--no-postgres | --postgres-only]
 */
import { readFileSync } from "node:fs";
import { estimateTokens } from "@contextblocks/core";
import { PostgresSessionStore } from "@contextblocks/postgres";
import type { SearchResult } from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import {
  candidateCount,
  MessageTree,
  neighbourShare,
  type SearchCandidate,
  type SessionStoreV1,
  type StoredSearchHit,
  selectSearchHits,
  weakShare,
} from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { planQuery, tokenize } from "@contextblocks/text";
import Database from "better-sqlite3";
import pg from "pg";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { locomoSessionTime } from "./locomo-time.js";
import { markdownTable } from "./markdown.js";

const limit = 10;
const weakShares = [0, 0.05, 0.1, 0.15, 0.2, 0.3];
const neighbourShares = [0, 0.3, 0.45, 0.6, 0.75, 1.01];

interface Setting {
  weakShare: number;
  neighbourShare: number;
}
const grid: Setting[] = weakShares.flatMap((weak) =>
  neighbourShares.map((near) => ({ weakShare: weak, neighbourShare: near })),
);

/** One question's candidates as its store ranked them, with what scoring needs. */
interface Asked {
  candidates: SearchCandidate[];
  evidence: ReadonlySet<string>;
  stems: ReadonlySet<string>;
}

interface Figures {
  hit: number;
  precision: number;
  tokens: number;
}

function figuresOf(asked: readonly Asked[], setting: Setting): Figures {
  let hits = 0;
  let shown = 0;
  let holding = 0;
  let tokens = 0;
  for (const question of asked) {
    const results = selectSearchHits(question.candidates, limit, setting);
    if (results.some((result) => question.evidence.has(result.id))) hits++;
    for (const result of results) {
      shown++;
      if (tokenize(result.content).some((token) => question.stems.has(token.stem))) holding++;
    }
    tokens += resultTokens(results);
  }
  const count = Math.max(asked.length, 1);
  return { hit: hits / count, precision: shown === 0 ? 1 : holding / shown, tokens: tokens / count };
}

function resultTokens(results: readonly SearchResult[]): number {
  let total = 0;
  for (const result of results) {
    total += estimateTokens(result.content);
    for (const turn of result.context ?? []) total += estimateTokens(turn.text);
  }
  return total;
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
}

function leaveOneOut(byConversation: ReadonlyMap<string, Asked[]>): Fold[] {
  const folds: Fold[] = [];
  for (const [heldOut, asked] of byConversation) {
    const training = [...byConversation].filter(([name]) => name !== heldOut).flatMap(([, list]) => list);
    let chosen = grid[0] as Setting;
    let best = figuresOf(training, chosen);
    for (const setting of grid.slice(1)) {
      const figures = figuresOf(training, setting);
      if (better(figures, best)) {
        best = figures;
        chosen = setting;
      }
    }
    folds.push({ conversation: heldOut, chosen, figures: figuresOf(asked, chosen) });
  }
  return folds;
}

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
  store(conversation: string): SessionStoreV1;
}

/** Each conversation's turns' times, by `dia_id`. */
type TurnTimes = ReadonlyMap<string, ReadonlyMap<string, Date>>;

async function askAll(
  backend: Backend,
  conversations: readonly LocomoConversation[],
  turnTimes: TurnTimes | null,
): Promise<Map<string, Asked[]>> {
  const times = turnTimes !== null;
  const byConversation = new Map<string, Asked[]>();
  for (const conversation of conversations) {
    const sessionId = `${conversation.name}${times ? "-t" : ""}`;
    const store = backend.store(sessionId);
    // Ids are unique across a database's sessions (Postgres holds every conversation in one database).
    const idOf = (turn: string) => `${sessionId}:${turn}`;
    const tree = new MessageTree(store);
    const timeOf = turnTimes?.get(conversation.name);
    let turns = 0;
    for (const turn of conversation.turns) {
      const time = timeOf?.get(turn.dia_id);
      await tree.appendMessage({
        id: idOf(turn.dia_id),
        role: turns++ % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: `${turn.speaker}: ${turn.text}` }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    }
    const asked: Asked[] = [];
    for (const question of conversation.questions) {
      const search = store.search as NonNullable<SessionStoreV1["search"]>;
      const candidates: StoredSearchHit[] = await search.call(
        store,
        question.question,
        candidateCount(limit, 1_000),
      );
      const plan = planQuery(question.question);
      asked.push({
        candidates,
        evidence: new Set(question.evidence.map(idOf)),
        stems: new Set(plan?.terms.map((term) => term.stem) ?? []),
      });
    }
    byConversation.set(conversation.name, asked);
  }
  return byConversation;
}

export interface SelectionResult {
  markdown: string;
}

export async function run(
  options: { smoke?: boolean; postgres?: boolean; postgresOnly?: boolean } = {},
): Promise<SelectionResult> {
  const conversations = readLocomo(options.smoke === true);
  if (conversations === null) {
    return { markdown: `Skipped: ${locomoDirectory.pathname} is not on this machine.` };
  }
  const turnTimes = timesOf(conversations);
  const local: Backend[] = [
    { name: "memory", store: (sessionId) => new InMemorySessionStore({ sessionId }) },
    {
      name: "SQLite (lean)",
      store: (sessionId) =>
        new SqliteSessionStore(new Database(":memory:"), { sessionId, newDatabaseLayout: "lean" }),
    },
    {
      name: "SQLite (keyed, the Durable Object layout)",
      store: (sessionId) =>
        new SqliteSessionStore(new Database(":memory:"), { sessionId, newDatabaseLayout: "keyed" }),
    },
  ];
  const backends = options.postgresOnly === true ? [] : local;
  let cluster: ThrowawayCluster | undefined;
  let client: pg.Client | undefined;
  let postgresNote = "";
  if (options.postgres !== false) {
    try {
      cluster = await startThrowawayCluster();
      client = new pg.Client({ connectionString: cluster.connectionString });
      await client.connect();
      const connected = client;
      backends.push({
        name: "Postgres",
        store: (sessionId) => new PostgresSessionStore(connected, sessionId),
      });
    } catch (error) {
      postgresNote = `\nPostgres skipped: no server could be started here (${String(error).split("\n")[0]}).`;
    }
  }
  const rows: string[][] = [];
  const choices: string[] = [];
  try {
    for (const backend of backends) {
      for (const times of [true, false]) {
        const asked = await askAll(backend, conversations, times ? turnTimes : null);
        const folds = leaveOneOut(asked);
        const all = [...asked.values()].flat();
        const defaults = figuresOf(all, { weakShare, neighbourShare });
        const unselected = figuresOf(all, { weakShare: 0, neighbourShare: 0 });
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
            folds.map((fold) => fold.figures.tokens),
            0,
          ),
          `${defaults.hit.toFixed(3)} / ${defaults.precision.toFixed(3)} / ${defaults.tokens.toFixed(0)}`,
          `${unselected.hit.toFixed(3)} / ${unselected.precision.toFixed(3)} / ${unselected.tokens.toFixed(0)}`,
        ]);
        choices.push(
          `${backend.name}, times ${times ? "on" : "off"}: ${folds
            .map((fold) => `${fold.conversation} ${fold.chosen.weakShare}/${fold.chosen.neighbourShare}`)
            .join(", ")}`,
        );
      }
    }
  } finally {
    await client?.end();
    cluster?.stop();
  }
  const questions = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  const markdown = [
    `${conversations.length} conversation(s), ${questions} questions${options.smoke === true ? " (smoke)" : ""}. ` +
      "Leave-one-conversation-out: fold mean ± spread (sample standard deviation over the folds) of the " +
      "setting chosen on the other conversations. precision = share of hits whose own text holds a query " +
      "term; tokens = the hits' text and their context per call. The defaults' and the unselected " +
      "ranking's (no cut, every neighbour match a hit) figures are over every question, for comparison.",
    "",
    markdownTable(
      [
        "backend",
        "message times",
        "hit@10 (LOO)",
        "precision (LOO)",
        "tokens per call (LOO)",
        `defaults ${weakShare}/${neighbourShare}: hit / precision / tokens`,
        "no selection: hit / precision / tokens",
      ],
      rows,
    ),
    "",
    "Settings chosen per held-out conversation (weakShare/neighbourShare):",
    "",
    ...choices.map((line) => `- ${line}`),
  ].join("\n");
  return { markdown: markdown + postgresNote };
}

/** Each turn's time: its session's (LoCoMo's `session_N_date_time`, read by `locomo-time.ts`). */
function timesOf(conversations: readonly LocomoConversation[]): TurnTimes {
  const all = new Map<string, Map<string, Date>>();
  for (const conversation of conversations) {
    const data = JSON.parse(
      readFileSync(new URL(`${conversation.name}.json`, locomoDirectory), "utf8"),
    ) as Record<string, unknown>;
    const times = new Map<string, Date>();
    for (let session = 1; Array.isArray(data[`session_${session}`]); session++) {
      const time = locomoSessionTime(data[`session_${session}_date_time`]);
      if (time === undefined) continue;
      for (const turn of data[`session_${session}`] as { dia_id: string }[]) times.set(turn.dia_id, time);
    }
    all.set(conversation.name, times);
  }
  return all;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    postgres: !process.argv.includes("--no-postgres"),
    postgresOnly: process.argv.includes("--postgres-only"),
  });
  console.log(result.markdown);
}
