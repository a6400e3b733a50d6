import { type SqlStatement, sql } from "@contextblocks/sql";
import { join, limitLiteral, raw } from "@contextblocks/sql/store-kit";
import { type QueryPlan, writtenPair } from "@contextblocks/text";
import { withCompounds } from "./postgres-terms.js";
import { writtenOr } from "./written-query.js";

/**
 * The one statement of a search. Query text never reaches Postgres as `tsquery` syntax: each planned term
 * (text's `planQuery`: words cut as the index cuts them, stopwords left out) is bound as a value of
 * `plainto_tsquery('english', …)`, which reads its argument as plain words, and the term queries are ORed
 * with the `||` operator in SQL we write. Adjacent query words are bound the same way to `phraseto_tsquery`.
 *
 * Ranking, in order:
 * 1. entries that contain the whole query as a phrase first: an exact match is the answer;
 * 2. coverage: the sum of the inverse document frequencies of the terms the entry contains, in its content
 *    or its key. An entry with more of the query's terms outranks one that repeats one term, and a rare term
 *    counts for more than a common one;
 * 3. how many adjacent pairs of query words the entry contains as written;
 * 4. `ts_rank_cd` over the terms (cover density: terms close together score higher), the key weighted above
 *    the content;
 * 5. the key, so equal scores come back in a stable order.
 *
 * One pass over the matches, nothing counted beside them: the matches (`matched`) are every entry of the
 * label holding any term, so a term's document frequency is how many of them hold it in their content, and
 * the collection they are weighed against is the matches themselves (idf = ln((M − df + 0.5) / (df + 0.5)),
 * M matches, at least 0.1). Counting the label's entries for a collection size cost a scan of the whole
 * label per search (9 ms of 17 at 20,000 entries); against the matches, a term every match holds weighs
 * least and a term few hold weighs most, as before. Whether a key holds a term is looked up among the few
 * entries whose key holds one (`keyed`, found by the key's GIN index), not by building every match's key
 * vector (a tenth of a search).
 *
 * A match's coverage depends only on which terms it holds, so the pass groups the matches by those flags
 * (`pattern`: a few groups, each with its count and its matches' places) instead of sorting every
 * match: the weights come from the groups' counts (`stats`), and the places read back (`covered`) are those
 * of the groups fewer than `limit` matches outrank, which are the rows `FETCH FIRST limit ROWS WITH TIES`
 * by coverage would keep. They are read back at their place (`ctid`, one tuple of the statement's own
 * snapshot: a look-up with no index), carrying no content through a sort; the matches stream into the
 * grouping as they are found, vectors never held. On those rows only:
 * - the phrase and the pairs are checked, and only where the group's flags leave them possible (a phrase
 *   holds every lexeme of its words): an exact match holds every term of the query, so it has the highest
 *   coverage there is and is among them;
 * - `ts_rank_cd` runs on the rows still tied after the first three keys, against the terms their group
 *   holds rather than the whole query (the same rank, for a fraction of the work: see `heldQuery`).
 *
 * Every `plainto_tsquery` / `phraseto_tsquery` is a scalar sub-select, `(SELECT plainto_tsquery(…))`: Postgres
 * runs it once per search (an InitPlan) whatever plan it picks. The adapters send this statement as a
 * prepared statement, and after five runs Postgres may keep one generic plan for it, made without the
 * values: a bare `plainto_tsquery($1)` is then no constant it can fold, and runs again for every row it
 * filters or flags (three times a search at 20,000 entries of the Zipf corpus). Once per search, the
 * generic plan is as fast as one planned for the values, and saves the planning (1.5 to 2 ms a search).
 *
 * The limit is written into the text (the provider's, a safe integer checked at construction), never bound:
 * a generic plan made without it assumes a bound `LIMIT` keeps a tenth of the rows, so for five-word queries
 * Postgres judged it costlier than planning each call, and kept paying that planning; and the plan it made
 * for an unknown limit ran slower than one made for the limit itself. A provider has one limit, so this adds
 * no statement texts.
 */
export function searchStatement(
  storedLabel: string,
  queryPlan: QueryPlan,
  limit: number,
  searchKeys: boolean,
): SqlStatement {
  const plan = withCompounds(queryPlan);
  const termQueries = plan.terms.map(
    (term) => sql`(SELECT ${writtenOr("plainto_tsquery", term.word, term.written ?? null)})`,
  );
  const limitText = limitLiteral(limit);
  const anyTerm = sql`(SELECT ${join(
    plan.terms.map((term) => writtenOr("plainto_tsquery", term.word, term.written ?? null)),
    " || ",
  )})`;
  // Per term: whether the match holds it in its content (c0, c1, …) and, searching keys, in its key (k0, k1,
  // …; null for the many entries whose key holds no term).
  const contentFlags = termQueries.map(
    (query, index) => sql`matched.content_tsv @@ (${query}) AS ${raw(`c${index}`)}`,
  );
  const keyFlags = searchKeys ? plan.terms.map((_, index) => raw(`keyed.k${index}`)) : [];
  const patternColumns = raw(
    [...plan.terms.map((_, index) => `c${index}`), ...keyFlags.map((_, index) => `k${index}`)].join(", "),
  );
  // The content flags, carried from the groups to their rows for the phrase and pair checks.
  const contentColumns = (table: string) =>
    raw(plan.terms.map((_, index) => `${table}.c${index}`).join(", "));
  const frequencies = join(
    plan.terms.map(
      (_, index) =>
        sql`coalesce(sum(pattern.entries) FILTER (WHERE ${raw(`pattern.c${index}`)}), 0) AS ${raw(`d${index}`)}`,
    ),
    ", ",
  );
  const weights = join(
    plan.terms.map((_, index) => {
      const frequency = raw(`counted.d${index}`);
      return sql`greatest(ln((counted.total - ${frequency} + 0.5) / (${frequency} + 0.5)), 0.1) AS ${raw(`w${index}`)}`;
    }),
    ", ",
  );
  // A group holds a term when its content or its key does.
  const holds = plan.terms.map((_, index) => {
    const content = raw(`pattern.c${index}`);
    return searchKeys ? sql`(${content} OR coalesce(${raw(`pattern.k${index}`)}, FALSE))` : content;
  });
  const coverage = join(
    holds.map((holding, index) => sql`CASE WHEN ${holding} THEN ${raw(`stats.w${index}`)} ELSE 0 END`),
    " + ",
  );
  const held = heldQuery(termQueries, holds, anyTerm);
  // Whether the group's key holds a term (its key flags are null when it holds none).
  const keyHolds = searchKeys ? sql`pattern.k0 IS NOT NULL` : sql`FALSE`;
  // Cover density over the key (weight A) and the content. A key holding no term adds no cover: the content's
  // positions only move up by the key's length, which changes no distance between them unless it pushes them
  // past the last position a vector keeps (16,383; a position takes at least one character), so the key's
  // vector is built for the keys that hold a term (`top.keyed`) and for content that long.
  const density = searchKeys
    ? sql`ts_rank_cd(CASE WHEN top.keyed OR char_length(entry.content) + char_length(top.key) >= 16383
        THEN setweight(to_tsvector('english', top.key), 'A') || entry.content_tsv
        ELSE entry.content_tsv END, top.held)`
    : sql`ts_rank_cd(entry.content_tsv, top.held)`;
  // The key's vector is built only for entries whose key holds a term (found by the key's GIN index), not
  // for every match: building it was a tenth of a search.
  const keyed = join(
    termQueries.map(
      (query, index) => sql`to_tsvector('english', entry.key) @@ (${query}) AS ${raw(`k${index}`)}`,
    ),
    ", ",
  );
  // `pg_backend_pid()` is parallel restricted: it keeps the planner from starting a worker for the key
  // look-up, which it would at 100,000 entries (the key index's statistics expect thousands of keys to hold
  // a term) and which took a quarter of a search to start, for the few keys that do.
  const matched = searchKeys
    ? sql`keyed AS MATERIALIZED (
  SELECT entry.key, ${keyed} FROM cf_agents_search_entries entry
  WHERE entry.label = ${storedLabel} AND to_tsvector('english', entry.key) @@ (${anyTerm})
    AND pg_backend_pid() IS NOT NULL
),
matched AS (
  SELECT entry.ctid AS place, entry.key, entry.content_tsv FROM cf_agents_search_entries entry
  WHERE entry.label = ${storedLabel} AND entry.content_tsv @@ (${anyTerm})
  UNION ALL
  SELECT entry.ctid AS place, entry.key, entry.content_tsv
  FROM keyed JOIN cf_agents_search_entries entry ON entry.label = ${storedLabel} AND entry.key = keyed.key
  WHERE NOT entry.content_tsv @@ (${anyTerm})
)`
    : sql`matched AS (
  SELECT entry.ctid AS place, entry.key, entry.content_tsv FROM cf_agents_search_entries entry
  WHERE entry.label = ${storedLabel} AND entry.content_tsv @@ (${anyTerm})
)`;
  // Every match's flags, and its key's when a key holds a term (a hashed join with the few `keyed` entries).
  const flagged = searchKeys
    ? sql`SELECT matched.place, ${join(contentFlags, ", ")}, ${join(keyFlags, ", ")}
    FROM matched LEFT JOIN keyed ON keyed.key = matched.key`
    : sql`SELECT matched.place, ${join(contentFlags, ", ")} FROM matched`;

  // A phrase (or pair) match holds every lexeme of its words, so where the content lacks the term of one of
  // its words (the same word: the same lexemes), the check is left out: on random words most rows tied for
  // the last places hold one term, and no pair. A word with no lexeme (a Postgres stopword) rules nothing out.
  const possible = (words: readonly string[], check: SqlStatement): SqlStatement => {
    const conditions = words.flatMap((word) => {
      const index = plan.terms.findIndex((term) => term.word === word);
      const query = termQueries[index];
      return query === undefined ? [] : [sql`(${raw(`covered.c${index}`)} OR numnode(${query}) = 0)`];
    });
    return conditions.length === 0 ? check : sql`(${join(conditions, " AND ")} AND ${check})`;
  };
  // Postgres refuses a constant in ORDER BY: the phrase and pair keys are left out when there are none.
  const exact =
    plan.phrase === null
      ? sql`FALSE`
      : possible(
          plan.terms.map((term) => term.word),
          sql`entry.content_tsv @@ (SELECT phraseto_tsquery('english', ${plan.phrase.join(" ")}))`,
        );
  const pairs =
    plan.pairs.length === 0
      ? sql`0`
      : join(
          plan.pairs.map(
            ([first, second]) =>
              sql`${possible(
                [first.word, second.word],
                sql`entry.content_tsv @@ (SELECT ${writtenOr(
                  "phraseto_tsquery",
                  `${first.word} ${second.word}`,
                  writtenPair([first, second]),
                )})`,
              )}::int`,
          ),
          " + ",
        );
  const leading = raw(
    [
      plan.phrase === null ? null : "exact DESC",
      "coverage DESC",
      plan.pairs.length === 0 ? null : "pairs DESC",
    ]
      .filter((key) => key !== null)
      .join(", "),
  );

  // `covered` already holds just the ties for the first places: its FETCH keeps them all, and tells the
  // planner they are few, so they are read back one by one at their place rather than by hashing the table.
  return sql`WITH ${matched},
pattern AS MATERIALIZED (
  SELECT ${patternColumns}, count(*)::float8 AS entries, array_agg(flagged.place) AS places
  FROM (${flagged}) flagged
  GROUP BY ${patternColumns}
),
stats AS MATERIALIZED (
  SELECT ${weights}
  FROM (SELECT sum(pattern.entries) AS total, ${frequencies} FROM pattern) counted
),
scored AS (
  SELECT pattern.places, pattern.entries, ${coverage} AS coverage, ${held} AS held, ${keyHolds} AS keyed,
    ${contentColumns("pattern")}
  FROM pattern CROSS JOIN stats
),
covered AS (
  SELECT unnest(ranked.places) AS place, ranked.coverage, ranked.held, ranked.keyed, ${contentColumns("ranked")}
  FROM (
    SELECT scored.places, scored.coverage, scored.held, scored.keyed, ${contentColumns("scored")},
      coalesce(sum(scored.entries) OVER (ORDER BY scored.coverage DESC
        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP), 0) AS above
    FROM scored
  ) ranked
  WHERE ranked.above < ${limitText}
  ORDER BY ranked.coverage DESC FETCH FIRST ${limitText} ROWS WITH TIES
),
top AS (
  SELECT covered.place, entry.key, ${exact} AS exact, covered.coverage, ${pairs} AS pairs, covered.held,
    covered.keyed
  FROM covered JOIN cf_agents_search_entries entry ON entry.ctid = covered.place
  ORDER BY ${leading} FETCH FIRST ${limitText} ROWS WITH TIES
)
SELECT top.key, entry.content
FROM top JOIN cf_agents_search_entries entry ON entry.ctid = top.place
ORDER BY ${leading}, ${density} DESC, top.key
LIMIT ${limitText}`;
}

/**
 * The query a group's matches are ranked by cover density against: the terms the group holds, ORed. When
 * every term query is one lexeme (or none, for a Postgres stopword), every cover of the ORed query is one
 * position of a term the vector holds, so `ts_rank_cd` gives the same rank against the terms held as
 * against them all, and does a fraction of the work: its cost grows with the query's size (against five
 * terms it took most of a search on the hundred rows tied for the last places, where the rows hold one).
 * A term of several lexemes (a word the parser splits: "e²x" is 'e' & 'x' in a C.UTF-8 database) makes
 * covers span positions, where lexemes of a term not held would count: the whole query is kept then. The
 * terms held are joined as `tsquery` text (each a `plainto_tsquery` value printed by Postgres, read back by
 * its `tsquery` input), once per group; a group always holds a term.
 */
function heldQuery(
  termQueries: readonly SqlStatement[],
  holds: readonly SqlStatement[],
  anyTerm: SqlStatement,
): SqlStatement {
  const oneLexemeEach = join(
    termQueries.map((query) => sql`numnode(${query}) <= 1`),
    " AND ",
  );
  const heldTerms = join(
    termQueries.map((query, index) => sql`CASE WHEN ${holds[index] ?? sql`FALSE`} THEN (${query})::text END`),
    ", ",
  );
  return sql`CASE WHEN ${oneLexemeEach}
      THEN array_to_string(ARRAY[${heldTerms}], ' | ')::tsquery
      ELSE (${anyTerm}) END`;
}
