import type { SearchRanking } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import type { QueryPlan } from "@contextblocks/text";
import { saysWhen } from "./says-when.js";

/**
 * The score expressions of a message search over `assistant_fts` (`f`), shared by the one statement
 * (message-search.ts) and the search in steps (search-in-steps.ts), so both rank alike. bm25 weights follow
 * the column order: id, session_id, role, speaker, parent_row, grandparent_row (unindexed), content, context,
 * time; bm25 is negative, lower ranks first.
 */

/** The bm25 weights of the ranking's fields: the message's text, the turns before it, its day. */
export function fieldWeights(ranking: SearchRanking): string {
  return `0, 0, 0, 0, 0, 0, 1, ${ranking.contextWeight}, ${ranking.timeWeight}`;
}

/** bm25 of the message's own text alone: below 0 when its own words match. */
export const ownScore: SqlStatement = raw("bm25(assistant_fts, 0, 0, 0, 0, 0, 0, 1, 0, 0)");

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
