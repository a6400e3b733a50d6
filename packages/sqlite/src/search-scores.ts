import type { SearchRanking } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { fts5MatchExpression, type QueryPlan } from "@contextblocks/text";
import { sessionKeyLike, sessionKeyOf } from "./message-index-schema.js";
import { saysWhen } from "./says-when.js";
import { leanLayoutStill, type SessionLayout } from "./session-schema.js";

/**
 * The score expressions of a message search over `assistant_fts` (`f`), shared by the one statement
 * (message-search.ts) and the search in steps (search-in-steps.ts), so both rank alike. bm25 weights follow
 * the column order: id, session_id, role, speaker, parent_row, grandparent_row (unindexed), content, context,
 * time, says_when (unindexed), session_key (weight 0: a session's token finds its rows and scores nothing); bm25
 * is negative, lower ranks first.
 */

/** The bm25 weights of the ranking's fields: the message's text, the turns before it, its day. */
export function fieldWeights(ranking: SearchRanking): string {
  return `0, 0, 0, 0, 0, 0, 1, ${ranking.contextWeight}, ${ranking.timeWeight}, 0, 0`;
}

/** bm25 of the message's own text alone: below 0 when its own words match. */
export const ownScore: SqlStatement = raw("bm25(assistant_fts, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0)");

/**
 * The query's words as an FTS5 expression over our search table. No column filter: the other searched
 * column is `session_key`, which holds one token a word can only match if it is spelled like one
 * (`sessionKeyLike`); then, and only then, the words are kept to the text, its context and its day (a
 * filter makes FTS5 sift every match's positions by column, about a tenth of the statement's time).
 */
export function searchWordsExpression(plan: QueryPlan): string {
  const spelledLikeKey = plan.terms.some(
    (term) => sessionKeyLike.test(term.word) || sessionKeyLike.test(term.stem),
  );
  return spelledLikeKey
    ? fts5MatchExpression(plan, { column: ["content", "context", "time"] })
    : fts5MatchExpression(plan);
}

/**
 * Whether every search row of a session carries its token (`sessionKeyOf`), so a one-session search may AND
 * it into its MATCH: `"every row"` on the keyed layout (agents@0.22.0 cannot write to it); `"while lean"` on
 * the lean layout, for as long as agents@0.22.0 has not opened the database (it adds its parent index when it
 * does, and writes search rows without the token: `leanLayoutStill`, checked by the statement itself, 0 rows
 * read); on the indexed layout no token is used, and a search filters the rows by session alone.
 */
export type SessionTokens = "every row" | "while lean";

/** The `SessionTokens` of a layout. */
export function sessionTokensOf(layout: SessionLayout): SessionTokens | undefined {
  if (layout === "keyed") return "every row";
  return layout === "lean" ? "while lean" : undefined;
}

/**
 * The MATCH of a search: its words (`searchWordsExpression`), and for one session, where its rows carry it
 * (`SessionTokens`), that session's token (`sessionKeyOf`), so FTS5 produces, ranks and hands over that
 * session's matches alone, whatever the others hold. The token, built in SQL as every writer builds it,
 * scores nothing (weight 0, its column only). The caller still filters by `session_id`: the token finds the
 * rows, the filter decides (two ids longer than FTS5's 32 KB token share one).
 */
export function searchMatch(
  words: string,
  sessionId: string | undefined,
  tokens: SessionTokens | undefined,
): SqlStatement {
  if (sessionId === undefined || tokens === undefined) return sql`${words}`;
  const withToken = sql`('session_key : "' || ${sessionKeyOf(sql`${sessionId}`)} || '" AND ' || ${words})`;
  if (tokens === "every row") return withToken;
  return sql`(CASE WHEN ${leanLayoutStill} THEN ${withToken} ELSE ${words} END)`;
}

/** Whether the dated factor applies: the query asks when and `datedBoost` is on. */
export function weighsDates(plan: QueryPlan, ranking: SearchRanking): boolean {
  return ranking.datedBoost > 0 && plan.asksWhen;
}

/**
 * Whether `f`'s text says when: the flag its row was written with, or, for a row another writer wrote without
 * it, the same check made here.
 */
export const saysWhenOfRow: SqlStatement = sql`coalesce(f.says_when, ${saysWhen(raw("f.content"))})`;

/**
 * The columns of a hit's message `m` (an alias of `assistant_messages`) every search returns: its time, its
 * parent and its grandparent (the turns a hit's neighbours are told by).
 */
export const messageColumnsOfM: SqlStatement = raw(`m.created_at AS created_at, m.parent_id AS parent_id,
  (SELECT p.parent_id FROM assistant_messages p WHERE p.id = m.parent_id AND p.session_id = m.session_id)
    AS grandparent_id`);
