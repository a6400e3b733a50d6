import { raw, type SqlStatement, sql } from "@contextblocks/sql";
import type { QueryPlan } from "@contextblocks/text";

/**
 * The one statement of a message search in one session (or, with `sessionId` undefined, in every session),
 * ranked as `PostgresSearchProvider` ranks entries
 * (see search-statement.ts): every planned term is a bound value of `plainto_tsquery`, terms ORed in SQL we
 * write, never `tsquery` syntax from the query. Order: the whole query as a phrase first, then coverage
 * (sum of the inverse document frequencies, counted in the session, of the terms a message contains), then
 * adjacent query pairs present, then `ts_rank_cd`, then the newest message first.
 *
 * A term found only in a message's context (`context_tsv`: its parent's and grandparent's text) counts at
 * `contextWeight` of its inverse document frequency, as the SQLite store weights its context column in bm25.
 *
 * Candidates come from the GIN indexes on `content_tsv` and `context_tsv`, filtered to the session; term
 * frequencies are counted over the candidates only (a message without any term adds nothing to any term's
 * count).
 */
/** The weight of a term found only in a message's context, against 1 in its own text. */
export const contextWeight = 0.3;

/** A message whose speaker the query names scores this much more (1.25×, as on SQLite). */
export const speakerBoost = 0.25;

/** Share of the best score of the same day added to each hit's own (as on SQLite: message-search.ts there). */
export const dayShare = 0.4;

/** BM25's term-frequency saturation and length normalisation, FTS5's defaults. */
const k1 = 1.2;
const b = 0.75;

/**
 * The context text of a message whose parent is `parentId` (an SQL expression) in `sessionId`: the parent's
 * and grandparent's own text, read by primary key when the message is written (never rewritten by a later
 * append).
 */
export function contextTextOf(sessionId: string, parentId: SqlStatement): SqlStatement {
  return sql`coalesce((SELECT p.text_content || E'\n' || coalesce((SELECT g.text_content FROM assistant_messages g
    WHERE g.session_id = p.session_id AND g.id = p.parent_id), '')
  FROM assistant_messages p WHERE p.session_id = ${sessionId} AND p.id = ${parentId}), '')`;
}

/**
 * After messages changed (text updated, or deleted; `ids` a JSON array as text): the children and
 * grandchildren of each read their context again. Run it after the change, in the same transaction.
 */
export function refreshContextStatement(sessionId: string, ids: string): SqlStatement {
  return sql`WITH changed (id) AS (SELECT json_array_elements_text(${ids}::text::json)),
children AS (SELECT m.id FROM assistant_messages m JOIN changed c ON m.parent_id = c.id WHERE m.session_id = ${sessionId}),
below AS (
  SELECT id FROM children
  UNION SELECT m.id FROM assistant_messages m JOIN children c ON m.parent_id = c.id WHERE m.session_id = ${sessionId}
)
UPDATE assistant_messages target SET context_text = ${contextTextOf(sessionId, sql`target.parent_id`)}
WHERE target.session_id = ${sessionId} AND target.id IN (SELECT id FROM below)`;
}

export function messageSearchStatement(
  sessionId: string | undefined,
  plan: QueryPlan,
  limit: number,
): SqlStatement {
  const inSession = sessionId === undefined ? sql`true` : sql`message.session_id = ${sessionId}`;
  const termQueries = plan.terms.map((term) => sql`plainto_tsquery('english', ${term.word})`);
  const anyTerm = joined(termQueries, " || ");
  const termRows = joined(
    termQueries.map((query) => sql`(${query})`),
    ", ",
  );
  const exact =
    plan.phrase === null
      ? sql``
      : sql`scored.content_tsv @@ phraseto_tsquery('english', ${plan.phrase.join(" ")}) DESC, `;
  const pairRows = joined(
    plan.pairs.map(
      ([first, second]) => sql`(phraseto_tsquery('english', ${`${first.word} ${second.word}`}))`,
    ),
    ", ",
  );
  const pairTable =
    plan.pairs.length === 0 ? sql`` : sql`pair (query) AS MATERIALIZED (VALUES ${pairRows}),\n`;
  const pairsPresent =
    plan.pairs.length === 0
      ? sql``
      : sql`(SELECT count(*) FROM pair WHERE scored.content_tsv @@ pair.query) DESC, `;

  const words = JSON.stringify(plan.terms.map((term) => term.word));
  return sql`WITH term (query) AS MATERIALIZED (VALUES ${termRows}),
${pairTable}candidate AS MATERIALIZED (
  SELECT message.id, message.session_id, message.role, message.content, message.created_at, message.position,
    message.content_tsv, message.context_tsv, message.after_tsv, message.time_tsv, message.speaker,
    message.time_text
  FROM assistant_messages message
  WHERE ${inSession} AND (message.content_tsv @@ (${anyTerm}) OR message.context_tsv @@ (${anyTerm})
    OR message.after_tsv @@ (${anyTerm}) OR message.time_tsv @@ (${anyTerm}))
),
messages AS MATERIALIZED (SELECT count(*) AS total FROM assistant_messages message WHERE ${inSession}),
weight AS MATERIALIZED (
  SELECT term.query, greatest(ln((messages.total - frequency.messages + 0.5) / (frequency.messages + 0.5)), 0.1) AS idf
  FROM term CROSS JOIN messages CROSS JOIN LATERAL (
    SELECT count(*) AS messages FROM candidate WHERE candidate.content_tsv @@ term.query
      OR candidate.context_tsv @@ term.query OR candidate.after_tsv @@ term.query
      OR candidate.time_tsv @@ term.query
  ) frequency
  WHERE numnode(term.query) > 0
),
sized AS (
  SELECT candidate.*, length(candidate.content_tsv) + length(candidate.context_tsv) + length(candidate.after_tsv)
    + length(candidate.time_tsv) AS size
  FROM candidate
),
average AS MATERIALIZED (SELECT greatest(avg(sized.size), 1) AS size FROM sized),
scored AS (
  SELECT sized.*,
    (SELECT coalesce(sum(weight.idf * matched.weight * ${raw(String(k1 + 1))}
        / (matched.weight + ${raw(String(k1))} * (1 - ${raw(String(b))} + ${raw(String(b))} * sized.size / average.size))), 0)
      FROM weight CROSS JOIN LATERAL (SELECT
        CASE WHEN sized.content_tsv @@ weight.query THEN 1 ELSE 0 END
        + CASE WHEN sized.time_tsv @@ weight.query THEN 1 ELSE 0 END
        + CASE WHEN sized.context_tsv @@ weight.query OR sized.after_tsv @@ weight.query
          THEN ${raw(String(contextWeight))} ELSE 0 END AS weight) matched
      WHERE matched.weight > 0)
      * CASE WHEN sized.speaker IN (SELECT json_array_elements_text(${words}::text::json))
        THEN ${raw(String(1 + speakerBoost))} ELSE 1 END
      AS score
  FROM sized CROSS JOIN average
)
SELECT scored.id, scored.session_id, scored.role, scored.content, scored.created_at
FROM scored
ORDER BY ${exact}scored.score + ${raw(String(dayShare))} * max(scored.score) OVER (PARTITION BY scored.session_id, scored.time_text) DESC,
  ${pairsPresent}ts_rank_cd(scored.content_tsv, (${anyTerm})) DESC,
  scored.position DESC
LIMIT ${limit}`;
}

/** Fragments joined by a separator we write (never user text). */
function joined(fragments: readonly SqlStatement[], separator: string): SqlStatement {
  const [first, ...rest] = fragments;
  if (first === undefined) return sql`NULL`;
  const between: SqlStatement = Object.freeze({
    strings: Object.freeze([separator]),
    values: Object.freeze([]),
  });
  return rest.reduce((sum, fragment) => sql`${sum}${between}${fragment}`, first);
}
