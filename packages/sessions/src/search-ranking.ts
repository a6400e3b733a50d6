import { ContextError } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";

/**
 * The weights of a message search's ranking, shared by the SQL stores (SQLite's and Postgres' session stores
 * rank with the same formula). Each is a choice a benchmark must make on conversations it does not score:
 * bench's `session-search-selection` chooses them on the LoCoMo conversations it has, and the defaults are
 * its choice on all of them but `nearShare` (leave-one-conversation-out measures how well that choice does on
 * a conversation it did not see).
 */
export interface SearchRanking {
  /** bm25 weight of the turns before a message (parent, grandparent) against 1 for its own text. */
  contextWeight: number;
  /** bm25 weight of the message's day in words ("8 May 2023"). */
  timeWeight: number;
  /** Share of a message's own-text score lent to its parent (squared: to its grandparent). */
  afterShare: number;
  /** A message whose speaker the query names scores `1 + speakerBoost` times as much. */
  speakerBoost: number;
  /** Share of the best score of the message's day (in its session) added to its own. */
  dayShare: number;
  /**
   * Share of the best score among the turns within `nearTurns` of a message (in its session, by append
   * order) added to its own: a conversation dwells on a thing for a while. Counted when the search's
   * candidates are all of one day (messages without times, or a chat of one day), where `dayShare` cannot
   * tell them apart. 0 by default, the one weight not bench's choice (which is 0.3 for messages without
   * times): its window keeps the ranking in one statement, about seven times the rows a search reads on a
   * Durable Object (about 1,450 against 200 for a 10-hit search).
   */
  nearShare: number;
  /** How many turns either side count as near (`nearShare`). */
  nearTurns: number;
  /**
   * When the query asks when ("when did…", "how long…": `asksWhen`, `@contextblocks/text`), a message whose
   * own text says when ("yesterday", "last week": `mentionsDate`) scores `1 + datedBoost` times as much. Needs
   * no message times: the answer to a "when" question usually tells the time in its words.
   */
  datedBoost: number;
  /**
   * How many more of the best matches by bm25 than the candidates asked for a SQL store's search ranks
   * further (the turns lending, the speaker, the day): deeper, a turn whose own bm25 is weak but whose
   * replies or day lift it is still seen. The rows a search reads on a Durable Object grow with it (about one
   * a candidate: about 200 rows for a 10-hit search at 70 candidates), not with the session, and so does
   * the work of a Postgres search after scoring its matches. A whole number; 40 by default (bench's choice
   * of 10 and 40 on SQLite); Postgres' store defaults to 160 (`defaultPostgresSearchRanking` there: its
   * choice of 40 and 160). The memory store ranks every match, so it does not read it.
   */
  extraCandidates: number;
}

export const defaultSearchRanking: Readonly<SearchRanking> = Object.freeze({
  contextWeight: 0.5,
  timeWeight: 1,
  afterShare: 0.5,
  speakerBoost: 0.5,
  dayShare: 0.4,
  nearShare: 0,
  nearTurns: 8,
  datedBoost: 0.5,
  extraCandidates: 40,
});

/**
 * The ranking with `given` over `defaults` (a store's own, `defaultSearchRanking` unless it says), every weight
 * checked: a finite number from 0 (a whole number for `nearTurns` and `extraCandidates`), so it can be written
 * into a statement as a literal.
 */
export function searchRankingOf(
  given: Partial<SearchRanking> | undefined,
  owner: string,
  defaults: Readonly<SearchRanking> = defaultSearchRanking,
): SearchRanking {
  if (given === undefined) return { ...defaults };
  if (typeof given !== "object" || given === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: searchRanking must be an object, got ${describeValue(given)}`,
    );
  }
  const ranking: SearchRanking = { ...defaults };
  for (const [name, value] of Object.entries(given)) {
    // Own keys only: `toString` or `constructor` is in every object, and is no weight.
    if (!Object.hasOwn(defaultSearchRanking, name)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${owner}: searchRanking has no weight "${clipped(name)}" (known: ${Object.keys(defaultSearchRanking).join(", ")})`,
      );
    }
    if (value === undefined) continue;
    const whole = name === "nearTurns" || name === "extraCandidates";
    if (
      typeof value !== "number" ||
      !Number.isFinite(value) ||
      value < 0 ||
      value > 1_000 ||
      (whole && !Number.isInteger(value))
    ) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${owner}: searchRanking.${name} must be ${whole ? "a whole number" : "a number"} from 0 to 1000, got ${describeValue(value)}`,
      );
    }
    ranking[name as keyof SearchRanking] = value;
  }
  return ranking;
}
