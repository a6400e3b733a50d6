import type { SearchRanking } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { join, raw } from "@contextblocks/sql/store-kit";
import type { QueryPlan } from "@contextblocks/text";
import { defaultPostgresSearchRanking } from "./postgres-search-ranking.js";
import { withCompounds } from "./postgres-terms.js";
import { anyOfSlots, slotQuery, termSlots } from "./term-slots.js";

/**
 * The one statement of a message search in one session (or, with `sessionId` undefined, in every session),
 * ranked as SQLite's session store ranks (message-search.ts there): every planned term and adjacent pair is a
 * bound value of `plainto_tsquery` / `phraseto_tsquery`, ORed in SQL we write, never `tsquery` syntax from the
 * query. Each is scored by BM25 (inverse document frequency counted in the session, at least 10⁻⁶ as FTS5 floors
 * it: a word in more than half the messages, such as a speaker's name in every "Name:" label, weighs next to
 * nothing; FTS5's k1 and b), with
 * fields weighed apart as in BM25F: the message's own text (`content_tsv`) 1, its day (`time_tsv`) 1, the
 * turns before it (`context_tsv`: parent and grandparent) `contextWeight`.
 *
 * Every match is scored; as on SQLite, only the best `limit` + `extraCandidates` by that score are ranked
 * further (about 0.74 of the time of ranking every match at 5,520 messages). The turns after a message count
 * at query time: each of those lends `afterShare` of its own-text score to its parent and `afterShare²` to its
 * grandparent, so no row is rewritten when its replies arrive. Then a speaker the query names multiplies a
 * message's score (`speakerBoost`), and `dayShare` of the best score of its day is added. Ties: the newest
 * message first.
 *
 * A session's candidates come from its own rows, read through its index (`session_id`) and tested against the
 * query, when it holds at most `sessionScanLimit` messages or at most half the table (Postgres' last row
 * estimate, `pg_class.reltuples`); a larger session's (and every session's) come from the GIN indexes on the
 * three fields, filtered to the session. Those indexes hold every session's messages, so a look-up through
 * them builds a bitmap of every match in the table: a small session's search slowed down as other sessions
 * grew (419 messages: 3 to 8 ms alone, 27 to 43 ms beside 100,000 others holding the same words), analyzed or not,
 * custom or generic plan. The session's message count (which BM25 needs anyway) picks the branch as the
 * statement runs, so a generic plan picks it too. Each candidate's row is
 * read once, with what ranking needs of it (position, day, speaker, whether it has text and says when, its
 * parent) and which of its fields hold each term, tested as the row is read and kept as the term's weight
 * (its fields' weights added, NULL where none holds it) and whether its own text holds it; one aggregate over
 * the candidates then counts each term's document frequency and their average size, and each candidate is
 * scored in one expression over the terms it holds (no row per candidate and term, no grouping). Only a
 * message that is lent a score without being a candidate itself, and the parent of a candidate whose parent
 * is not one, are read again by key.
 *
 * No step joins two growing CTEs: a CTE has no index, and on a table Postgres has never analyzed (a session
 * just imported, before autovacuum's analyze) every estimate is one row, so such a join became a nested loop
 * that read the candidates once per candidate (only one-row CTEs are joined: `search_queries`, `statistics`). A
 * candidate's columns ride on its own row of `lent`, gathered by the aggregate that adds up the message's
 * shares; a parent's parent is read from one JSON object of the candidates' parents (built once) or by key.
 * The shares are added in one order, so the plan chosen cannot swap two messages of equal score.
 */
/**
 * Up to this many messages a session's candidates are its own rows even when it is most of the table (above
 * all, a table Postgres has never analyzed: `reltuples` -1). Alone in the table, reading every row of a LoCoMo
 * session took 1.1 to 1.3 times the GIN look-up from 369 to 18,728 messages: a small cost below this size, and
 * a bound on what others' messages can add to it.
 */
export const SESSION_SCAN_LIMIT = 2_000;

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
  queryPlan: QueryPlan,
  limit: number,
  ranking: SearchRanking = defaultPostgresSearchRanking,
  sessionScanLimit: number = SESSION_SCAN_LIMIT,
): SqlStatement {
  const plan = withCompounds(queryPlan);
  const number = (value: number) => raw(String(value));
  const inSession = sessionId === undefined ? sql`true` : sql`message.session_id = ${sessionId}`;
  const slots = termSlots(plan);
  const termQueries = slots.map(slotQuery);
  // Each query is built once per search, in `search_queries` (parsing a word is most of what building one costs;
  // built where each is tested, a word was parsed once per field and branch), and joined to the rows it tests as
  // `q`: one row, so the GIN indexes are read with its values (a nested loop, whatever the statistics say), and
  // each test reads a column, where a scalar sub-select per test was one more plan to make and start every search.
  const queryColumns = join(
    termQueries.map((query, index) => sql`${query} AS q_${raw(String(index))}`),
    ", ",
  );
  const anyOf = anyOfSlots(slots.length);
  const anyTerm = raw("q.any_term");
  const termQuery = (index: number) => raw(`q.q_${index}`);
  // Which fields hold each term, checked once per candidate and term as the candidate is read. The day field
  // holds only a day, a month and a year ("8 May 2023"), so a term with no digit and no month in it is not
  // looked for there: a bound flag, evaluated first (`AND` stops at false), so the statement's text, and with
  // it its prepared plan, is the same for every query with as many slots (term-slots.ts).
  const fieldFlags = join(
    slots.map(
      (slot, index) => sql`message.content_tsv @@ ${termQuery(index)} AS text_${raw(String(index))},
    (${slot.mayNameADay}::boolean AND message.time_tsv @@ ${termQuery(index)}) AS time_${raw(String(index))},
    message.context_tsv @@ ${termQuery(index)} AS context_${raw(String(index))}`,
    ),
    ",\n    ",
  );
  const terms = slots.map((_, index) => String(index));
  const words = JSON.stringify(plan.terms.map((term) => term.word));
  // The number of candidates that hold each term in any field (a weight, not NULL): its document frequency.
  const frequencies = raw(
    terms.map((n) => `count(candidate.weight_${n})::float8 AS frequency_${n}`).join(",\n    "),
  );
  // Each term's inverse document frequency, computed once per search.
  const idfs = raw(
    terms
      .map(
        (n) =>
          `greatest(ln((messages.total - counted.frequency_${n} + 0.5) / (counted.frequency_${n} + 0.5)), 0.000001::float8) AS idf_${n}`,
      )
      .join(",\n    "),
  );
  // Each term's BM25F weight in the candidate, its fields' weights added; NULL when no field holds it (a field
  // may weigh 0, and still counts for the document frequency). Added up as the candidate is read, once: the
  // candidate's row then carries one number and one flag (its own text) per term where it carried three flags,
  // and its score reads each weight once.
  const weight = (n: string) =>
    `CASE WHEN flagged.text_${n} OR flagged.time_${n} OR flagged.context_${n} THEN
      (CASE WHEN flagged.text_${n} THEN 1.0::float8 ELSE 0.0::float8 END
      + CASE WHEN flagged.time_${n} THEN ${ranking.timeWeight}::float8 ELSE 0.0::float8 END
      + CASE WHEN flagged.context_${n} THEN ${ranking.contextWeight}::float8 ELSE 0.0::float8 END) END`;
  const weights = raw(terms.map((n) => `${weight(n)} AS weight_${n}, flagged.text_${n}`).join(",\n    "));
  const own = () => "1.0::float8";
  // BM25's saturation of a term's weight in a candidate (`length_norm`: k1 and b applied to its size over the
  // average, once per candidate).
  const saturation = (tf: string) => `${tf} * ${k1 + 1} / (${tf} + candidate.length_norm)`;
  // Only the terms the candidate holds are added, in term order (one it does not hold would add 0).
  const scoreOf = (holds: (n: string) => string, tf: (n: string) => string) =>
    raw(
      terms
        .map(
          (n) =>
            `CASE WHEN ${holds(n)} THEN statistics.idf_${n} * (${saturation(tf(n))}) ELSE 0.0::float8 END`,
        )
        .join("\n      + "),
    );
  const candidateColumns = sql`message.id, message.session_id, message.parent_id, message.position, message.time_text,
    message.speaker, message.text_content <> '' AS has_text, message.says_when,
    (length(message.content_tsv) + length(message.context_tsv) + length(message.time_tsv))::float8 AS size,
    ${fieldFlags}`;
  const matches = sql`(message.content_tsv @@ (${anyTerm}) OR message.context_tsv @@ (${anyTerm})
    OR message.time_tsv @@ (${anyTerm}))`;
  const limitCount = raw(`${Math.max(0, Math.floor(sessionScanLimit))}::float8`);
  // Each branch is gated by `messages.own_rows` (a one-time filter): only one of them runs. OFFSET 0 keeps the
  // query's test out of the scan of the session's rows, so the planner cannot take the GIN indexes for it.
  const candidates =
    sessionId === undefined
      ? sql`SELECT ${candidateColumns} FROM assistant_messages message CROSS JOIN search_queries q WHERE ${matches}`
      : sql`SELECT ${candidateColumns}
  FROM (SELECT * FROM assistant_messages message WHERE ${inSession}
    AND (SELECT messages.own_rows FROM messages) OFFSET 0) message CROSS JOIN search_queries q
  WHERE ${matches}
  UNION ALL
  SELECT ${candidateColumns} FROM assistant_messages message CROSS JOIN search_queries q
  WHERE ${inSession} AND NOT (SELECT messages.own_rows FROM messages) AND ${matches}`;
  // Whether any message still waits for its search fields (message-search-index.ts), read through the partial
  // index that holds only those: with the hits, so a search whose fields are current is one round trip.
  const fieldsPending = sql`(SELECT EXISTS (SELECT 1 FROM assistant_messages pending
    WHERE pending.search_state < 2 ${sessionId === undefined ? sql`` : sql`AND pending.session_id = ${sessionId}`}))`;
  // The session's own rows: when it is small, or at most half the table by the row count Postgres last
  // estimated (`reltuples`, -1 before any analyze or vacuum).
  return sql`WITH search_queries AS MATERIALIZED (
  SELECT built.*, ${anyOf} AS any_term FROM (SELECT ${queryColumns}) built
),
messages AS MATERIALIZED (
  SELECT counted.total, counted.total <= greatest(${limitCount}, (SELECT table_class.reltuples::float8 / 2
    FROM pg_class table_class WHERE table_class.oid = to_regclass('assistant_messages'))) AS own_rows
  FROM (SELECT count(*)::float8 AS total FROM assistant_messages message WHERE ${inSession}) counted
),
-- OFFSET 0: each field's test runs once, where the row is read, not again in each expression that reads it.
candidate AS MATERIALIZED (
  SELECT flagged.id, flagged.session_id, flagged.parent_id, flagged.position, flagged.time_text, flagged.speaker,
    flagged.has_text, flagged.says_when, flagged.size, ${weights}
  FROM (${candidates} OFFSET 0) flagged
),
statistics AS MATERIALIZED (
  SELECT counted.size, ${idfs}
  FROM (SELECT greatest(avg(candidate.size)::float8, 1.0::float8) AS size,
    ${frequencies}
  FROM candidate) counted CROSS JOIN messages
),
scored AS MATERIALIZED (
  SELECT candidate.session_id, candidate.id, candidate.parent_id, candidate.position, candidate.time_text,
    candidate.speaker, candidate.has_text, candidate.says_when,
    ${scoreOf(
      (n) => `candidate.weight_${n} IS NOT NULL`,
      (n) => `candidate.weight_${n}`,
    )} AS score,
    ${scoreOf((n) => `candidate.text_${n}`, own)} AS own
  FROM (SELECT candidate.*, ${raw(`${k1} * (1 - ${b} + ${b} * candidate.size / statistics.size)`)} AS length_norm
    FROM candidate CROSS JOIN (SELECT * FROM statistics) statistics OFFSET 0) candidate
    CROSS JOIN (SELECT * FROM statistics) statistics
  -- Only the best matches are ranked further, as on SQLite: the lending, the look-ups and the windows cost
  -- per scored message, and a match far below the best is not lifted into the results by its replies.
  ORDER BY 9 DESC, candidate.position DESC, candidate.session_id, candidate.id
  LIMIT ${limit + ranking.extraCandidates}
),
-- Each candidate's parent (JSON null for a root) by id, built once: a parent's parent is looked up in it at
-- the same cost whatever the plan (ids are unique across sessions: idx_assistant_msg_id). Built from two arrays:
-- \`jsonb_object_agg\` turned each key and value into a JSON document first, twice the time.
parents AS MATERIALIZED (SELECT jsonb_object(array_agg(scored.id), array_agg(scored.parent_id)) AS of FROM scored),
-- Each message's shares, one row each: a candidate's own score with its columns (share 0), and what a child (1)
-- or a grandchild (2) lends it, so a candidate's columns are gathered with its shares.
lent (session_id, id, share, score, own_hit, position, time_text, speaker, has_text, says_when) AS (
  SELECT scored.session_id, scored.id, 0, scored.score, CASE WHEN scored.own > 0 THEN 1 ELSE 0 END,
    scored.position, scored.time_text, scored.speaker, scored.has_text, scored.says_when
  FROM scored
  UNION ALL
  SELECT scored.session_id, scored.parent_id, 1, ${number(ranking.afterShare)}::float8 * scored.own, 0,
    NULL, NULL, NULL, NULL, NULL
  FROM scored WHERE scored.parent_id IS NOT NULL AND scored.own > 0
  UNION ALL
  SELECT grand.session_id, grand.id, 2, grand.score, 0, NULL, NULL, NULL, NULL, NULL FROM (
    SELECT scored.session_id, ${number(ranking.afterShare * ranking.afterShare)}::float8 * scored.own AS score,
      -- The parent's parent: from the parent's own row when it is a candidate, else looked up by key.
      CASE WHEN known.parent IS NOT NULL THEN known.parent #>> '{}' ELSE (SELECT parent.parent_id
        FROM assistant_messages parent WHERE ${byId("parent", "scored.parent_id", "scored.session_id")})
      END AS id
    FROM scored CROSS JOIN LATERAL (SELECT (SELECT parents.of FROM parents) -> scored.parent_id AS parent) known
    WHERE scored.parent_id IS NOT NULL AND scored.own > 0 OFFSET 0
  ) grand
  WHERE grand.id IS NOT NULL
),
ranked AS MATERIALIZED (
  SELECT message.id, message.session_id, message.position, message.time_text, message.own_hit,
    message.score * CASE WHEN message.speaker IN (SELECT json_array_elements_text(${words}::text::json))
      THEN ${number(1 + ranking.speakerBoost)}::float8 ELSE 1.0::float8 END${datedFactor(plan, ranking)} AS score
  FROM (SELECT total.id, total.session_id, total.own_hit, total.score,
      -- A candidate's columns come with its own row; a message only lent to is read by key (OFFSET 0: once per
      -- such message, through the id index, never a join of the table planned from the statistics).
      CASE WHEN total.candidate THEN total.position ELSE looked.position END AS position,
      CASE WHEN total.candidate THEN total.time_text ELSE looked.time_text END AS time_text,
      CASE WHEN total.candidate THEN total.speaker ELSE looked.speaker END AS speaker,
      CASE WHEN total.candidate THEN total.has_text ELSE looked.has_text END AS has_text,
      CASE WHEN total.candidate THEN total.says_when ELSE looked.says_when END AS says_when
  -- The shares are added in one order (its own, its children's, its grandchildren's) whatever order the plan
  -- reads them in, so two messages of equal score (a text repeated) keep their order on every plan.
  FROM (SELECT lent.session_id, lent.id,
      coalesce(sum(lent.score) FILTER (WHERE lent.share = 0), 0.0::float8)
        + coalesce(sum(lent.score) FILTER (WHERE lent.share = 1), 0.0::float8)
        + coalesce(sum(lent.score) FILTER (WHERE lent.share = 2), 0.0::float8) AS score,
      max(lent.own_hit) AS own_hit, bool_or(lent.share = 0) AS candidate, max(lent.position) AS position,
      max(lent.time_text) AS time_text,
      max(lent.speaker) AS speaker, bool_or(lent.has_text) AS has_text, bool_or(lent.says_when) AS says_when
    FROM lent GROUP BY lent.id, lent.session_id) total
  LEFT JOIN LATERAL (
    SELECT message.position, message.time_text, message.speaker, message.text_content <> '' AS has_text,
      message.says_when
    FROM assistant_messages message
    WHERE NOT total.candidate AND ${byId("message", "total.id", "total.session_id")} OFFSET 0
  ) looked ON true) message
  -- A message without text (a tool call) is never a hit, even when the turns around it lend it a score.
  WHERE message.has_text
),
best AS (
  SELECT ranked.session_id, ranked.id, ranked.position, ranked.own_hit, ranked.score AS relevance,
    ranked.score${dayShareOf(ranking)}${nearShareOf(ranking)}
      AS score
  FROM ranked
  ORDER BY 6 DESC, ranked.position DESC
  LIMIT ${limit}
)
SELECT message.id, message.session_id, message.role, message.text_content AS text, message.created_at,
  message.parent_id, parent.parent_id AS grandparent_id, best.relevance, best.own_hit,
  ${fieldsPending} AS fields_pending
FROM best JOIN assistant_messages message ON ${byId("message", "best.id", "best.session_id")}
LEFT JOIN assistant_messages parent ON ${byId("parent", "message.parent_id", "message.session_id")}
ORDER BY best.score DESC, best.position DESC`;
}

/**
 * A message of `alias` found by its id (`id`, an SQL expression) in `sessionId` (one too). An id is unique in
 * the table (`idx_assistant_msg_id`), so the id alone finds the row and the session is a check on it, written
 * with `IS NOT DISTINCT FROM`, which no index serves: the unique index is the only way in, whatever the
 * statistics say. With the session as an index condition, statistics taken while the table held a handful of
 * rows had Postgres read each hit's parent through the session's index, every message of the session filtered
 * by id (a search of a 3,001-message session took 15 to 24 ms instead of 7 to 11).
 */
function byId(alias: string, id: string, sessionId: string): SqlStatement {
  return raw(`${alias}.id = ${id} AND ${alias}.session_id IS NOT DISTINCT FROM ${sessionId}`);
}

/**
 * `dayShare` of the best score of the message's day; nothing when the share is 0 (adding 0 changes no score,
 * and the window costs a sort of every scored message).
 */
function dayShareOf(ranking: SearchRanking): SqlStatement {
  if (ranking.dayShare === 0) return sql``;
  return sql`
      + ${raw(String(ranking.dayShare))}::float8 * max(ranked.score) OVER (PARTITION BY ranked.session_id, ranked.time_text)`;
}

/**
 * `nearShare` of the best score within `nearTurns` positions, counted only when the scored messages are all
 * of one day (as on SQLite); nothing when the share is 0, as `dayShareOf`.
 */
function nearShareOf(ranking: SearchRanking): SqlStatement {
  if (ranking.nearShare === 0) return sql``;
  const turns = raw(String(ranking.nearTurns));
  return sql`
      + CASE WHEN min(ranked.time_text) OVER () IS NOT DISTINCT FROM max(ranked.time_text) OVER ()
        THEN ${raw(String(ranking.nearShare))}::float8 * max(ranked.score) OVER (PARTITION BY ranked.session_id
          ORDER BY ranked.position RANGE BETWEEN ${turns} PRECEDING AND ${turns} FOLLOWING)
        ELSE 0.0::float8 END`;
}

/**
 * The factor of a message whose own text says when (the generated column `says_when`: schema.ts), for a
 * query that asks when (`datedBoost`), as SQLite's store decides it (`LIKE` over `datePatterns` there).
 */
function datedFactor(plan: QueryPlan, ranking: SearchRanking): SqlStatement {
  if (ranking.datedBoost <= 0) return sql``;
  // Whether the query asks when is a bound flag (a factor of 1 changes no score), so asking when or not
  // shares one statement text and one prepared plan.
  return sql` * CASE WHEN ${plan.asksWhen}::boolean AND message.says_when THEN ${raw(String(1 + ranking.datedBoost))}::float8 ELSE 1.0::float8 END`;
}
