import type { SearchRanking } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { join, limitLiteral, raw } from "@contextblocks/sql/store-kit";
import type { QueryPlan } from "@contextblocks/text";
import { bestByDay } from "./day-share-order.js";
import {
  fieldWeights,
  messageColumnsOfM,
  ownScore,
  type SessionTokens,
  saysWhenOfRow,
  searchMatch,
  weighsDates,
} from "./search-scores.js";
import type { SessionShare } from "./session-share.js";
import { rowsOf, type SqlSteps } from "./sql-steps.js";

/**
 * A session search where FTS5 sorts the matches (a Durable Object's), in three short statements instead of one:
 * the best matches with their rows, the rows of the turns they lend to that are not matches themselves, and the
 * messages of the candidates kept. The lending, the speaker's and the dated factors, the day's share and the
 * cut run here, on rows already read. One statement doing it all read about 10 rows a candidate (its `WITH`
 * tables and its `GROUP BY` are rows read on a Durable Object, each read again at every pass); these read
 * about 3 (700 rows against about 200 for a 10-hit search). The arithmetic is the statement's, in the same
 * order, and the sums are SQLite's (`KbnSum`), so the candidates are the same as the other sort's
 * (`"bm25"`, the one statement), to the last bit of their scores.
 */
export interface StepwiseSearch {
  plan: QueryPlan;
  expression: string;
  ranking: SearchRanking;
  /** How many of the best matches are read and ranked further (`candidatesOf`). */
  candidates: number;
  /** How many candidates are returned, best first. */
  limit: number;
  sessionId: string | undefined;
  /** Whether the session's rows carry its token (`SessionTokens`): then it is in the MATCH. */
  sessionTokens?: SessionTokens | undefined;
  /** With a session and its token: whether it was found alone in the index lately (`bestMatches`). */
  share?: SessionShare | undefined;
}

/** A search candidate as a statement returns it (`resultOf`, message-search.ts, makes a `SearchCandidate` of it). */
export interface CandidateRow {
  id: string;
  session_id: string;
  role: string;
  content: string;
  created_at: string | null;
  parent_id: string | null;
  grandparent_id: string | null;
  /**
   * The message's relevance, higher is better: bm25 with the shares lent and the speaker's factor, negated,
   * before the day's share (which lifts every turn of a day alike, and would hide how weak a turn is).
   */
  relevance: number;
  /** 1 when the message's own text holds a query word, 0 when only the turns around it do. */
  own_hit: number;
}

/** A candidate as the steps return it, with what placed it. */
export interface StepwiseCandidate extends CandidateRow {
  time: string | null;
  row: number;
  score: number;
}

/** A search row as the first two steps read it. */
interface SearchRow {
  row: number;
  id: string;
  session_id: string;
  role: string;
  content: string | null;
  speaker: unknown;
  time: string | null;
  /** 1 when its text says when and the query asks when (`datedBoost`); absent otherwise. */
  dated?: number;
}

interface MatchRow extends SearchRow {
  parent_row: number | null;
  grandparent_row: number | null;
  /** bm25 with the ranking's field weights (FTS5's `rank`); lower is better. */
  score: number;
  /** bm25 of the message's own text alone: below 0 when its own words match. */
  own: number;
}

interface MessageRow {
  id: string;
  session_id: string;
  created_at: string | null;
  parent_id: string | null;
  grandparent_id: string | null;
}

const searchColumns = raw(`f.rowid AS row, f.id AS id, f.session_id AS session_id, f.role AS role,
  f.content AS content, f.speaker AS speaker, f.time AS time`);

/** The search, as steps (sql-steps.ts): run awaited or at once by the caller. */
export function* searchInSteps(search: StepwiseSearch): SqlSteps<StepwiseCandidate[]> {
  const { ranking } = search;
  const dated = weighsDates(search.plan, ranking);
  const datedColumn = dated ? sql`, CASE WHEN ${saysWhenOfRow} THEN 1 ELSE 0 END AS dated` : sql``;
  const matches = yield* bestMatches(search, datedColumn);

  const totals = lentTotals(matches, ranking.afterShare);
  const rows = new Map<number, SearchRow>(matches.map((match) => [Number(match.row), match]));
  // A rowid that is not a whole number (a row another writer spoiled) can match no row.
  const missing = [...totals.keys()].filter((row) => !rows.has(row) && Number.isSafeInteger(row));
  if (missing.length > 0) {
    // Rowids read from our own rows, written as numbers: a Durable Object binds at most 100 values.
    const lent = yield* rowsOf<SearchRow>(sql`
      SELECT ${searchColumns}${datedColumn} FROM assistant_fts f
      WHERE f.rowid IN (${join(missing.map((row) => raw(String(row))))})`);
    for (const row of lent) rows.set(Number(row.row), row);
  }

  // The speaker's factor: a message whose speaker the query names.
  const named = new Set(search.plan.terms.map((term) => term.word));
  let scored: StepwiseCandidate[] = [];
  for (const [target, total] of totals) {
    const row = rows.get(target);
    // A message without text (the keyed layout gives it an empty row) is never a hit.
    if (row === undefined || row.content === null || row.content === "") continue;
    let score = total.sum.value() * (named.has(row.speaker as string) ? 1 + ranking.speakerBoost : 1);
    if (dated) score *= Number(row.dated) === 1 ? 1 + ranking.datedBoost : 1;
    scored.push({
      id: row.id,
      session_id: row.session_id,
      role: row.role,
      content: row.content,
      created_at: null,
      parent_id: null,
      grandparent_id: null,
      relevance: -score,
      own_hit: total.ownHit,
      time: row.time,
      row: target,
      score,
    });
  }

  // The messages of the candidates kept; one whose message is gone is no candidate, and the day's share and
  // the cut are worked out again without it (as a join of the messages before the cut would have).
  for (;;) {
    const best = bestByDay(scored, ranking.dayShare, search.limit);
    if (best.length === 0) return best;
    const messages = yield* rowsOf<MessageRow>(sql`
      SELECT m.id AS id, m.session_id AS session_id, ${messageColumnsOfM} FROM assistant_messages m
      WHERE m.id IN (SELECT value FROM json_each(${JSON.stringify(best.map((candidate) => candidate.id))}))`);
    const byKey = new Map(messages.map((message) => [keyOf(message), message]));
    const gone = new Set(best.filter((candidate) => !byKey.has(keyOf(candidate))));
    if (gone.size === 0) {
      return best.map((candidate) => {
        const message = byKey.get(keyOf(candidate)) as MessageRow;
        return {
          ...candidate,
          created_at: message.created_at,
          parent_id: message.parent_id,
          grandparent_id: message.grandparent_id,
        };
      });
    }
    scored = scored.filter((candidate) => !gone.has(candidate));
  }
}

/**
 * The first step: the best matches with their rows, sorted by FTS5. A session's token in the MATCH makes FTS5
 * count the token's rows for bm25, the whole session's, at every search (1.07× the time of a session alone at
 * 400 messages, 1.17× at 11,000). So while the session was last found alone (`SessionShare`), the whole
 * index's best are read first, without the token or the filter (as many rows as the filtered statement reads
 * when the session is alone), and kept if every one is the session's: they are then its own best, with the
 * same scores (the token, weight 0, scores nothing and is in every row's length either way). When one is not,
 * the session's are read again with its token and the share hears of it (`notAlone`): the next `retryEvery`
 * searches use the token straight away, and each probe costs at most this step's rows once more.
 */
function* bestMatches(search: StepwiseSearch, datedColumn: SqlStatement): SqlSteps<MatchRow[]> {
  const { sessionId } = search;
  const statement = (inSession: string | undefined) => sql`
    SELECT ${searchColumns}, f.parent_row AS parent_row, f.grandparent_row AS grandparent_row,
      f.rank AS score, ${ownScore} AS own${datedColumn}
    FROM assistant_fts f
    WHERE assistant_fts MATCH ${searchMatch(search.expression, inSession, search.sessionTokens)}
      AND f.rank MATCH ${`bm25(${fieldWeights(search.ranking)})`}
      ${inSession === undefined ? sql`` : sql`AND f.session_id = ${inSession}`}
    ORDER BY f.rank LIMIT ${limitLiteral(search.candidates)}`;
  if (sessionId !== undefined && search.sessionTokens !== undefined && search.share?.tryAlone() === true) {
    const whole = yield* rowsOf<MatchRow>(statement(undefined));
    if (whole.every((match) => match.session_id === sessionId)) return whole;
    search.share.notAlone();
  }
  return yield* rowsOf<MatchRow>(statement(sessionId));
}

function keyOf(row: { id: string; session_id: string }): string {
  return JSON.stringify([row.session_id, row.id]);
}

/**
 * What each matched message lends: its own score to itself, `afterShare` of its own text's score to its
 * parent and `afterShare²` to its grandparent, summed per message in the order the one statement's
 * `UNION ALL` gives them (the matches' own scores, then the parents' shares, then the grandparents'), and
 * whether any of them is its own text's match.
 */
function lentTotals(
  matches: readonly MatchRow[],
  afterShare: number,
): Map<number, { sum: KbnSum; ownHit: number }> {
  const totals = new Map<number, { sum: KbnSum; ownHit: number }>();
  const lend = (target: number, score: number, ownHit: number) => {
    let total = totals.get(target);
    if (total === undefined) {
      total = { sum: new KbnSum(), ownHit: 0 };
      totals.set(target, total);
    }
    total.sum.add(score);
    total.ownHit = Math.max(total.ownHit, ownHit);
  };
  for (const match of matches) lend(Number(match.row), Number(match.score), Number(match.own) < 0 ? 1 : 0);
  for (const match of matches) {
    if (match.parent_row !== null && Number(match.own) < 0) {
      lend(Number(match.parent_row), afterShare * Number(match.own), 0);
    }
  }
  const grandShare = afterShare * afterShare;
  for (const match of matches) {
    if (match.grandparent_row !== null && Number(match.own) < 0) {
      lend(Number(match.grandparent_row), grandShare * Number(match.own), 0);
    }
  }
  return totals;
}

/**
 * A sum as SQLite's `sum()` adds floating-point values (Kahan-Babuska-Neumaier compensated summation, SQLite
 * 3.43 and later), so a total worked out here equals the one statement's to the last bit.
 */
export class KbnSum {
  #sum = 0;
  #error = 0;

  add(value: number): void {
    const total = this.#sum + value;
    this.#error +=
      Math.abs(this.#sum) > Math.abs(value) ? this.#sum - total + value : value - total + this.#sum;
    this.#sum = total;
  }

  value(): number {
    return Number.isFinite(this.#error) ? this.#sum + this.#error : this.#sum;
  }
}
