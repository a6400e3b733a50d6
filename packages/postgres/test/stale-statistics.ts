import type pg from "pg";
import { expect } from "vitest";
import type { SearchableTree } from "./message-tree.js";
import { nodesOf, type PlanNode } from "./plan-nodes.js";
import type { RecordedStatement } from "./recorded-statements.js";

/**
 * The statistics a plan test runs under: none (a fresh import), and taken when the table held 3 messages (an
 * `ANALYZE` right after the tables were created), which is where the plans that went quadratic were made.
 */
export const staleStatistics: [name: string, analyzedAt: number | undefined][] = [
  ["never analyzed", undefined],
  ["analyzed at 3 messages", 2],
];

/** Messages in the long session `writeLongSession` writes. */
export const longSessionLength = 3_001;

/**
 * A session `"long"` of 3,001 messages in one chain, `m0` to `m3000`, every third turn about "the harbour and
 * the boats", written straight into the table with autovacuum off: never analyzed (as a fresh import leaves it)
 * or, with `analyzedAt`, analyzed once when it held that many messages after `m0` and never since (as an
 * `ANALYZE` run right after the tables were created leaves it). The tree's pointer names `m3000`.
 */
export async function writeLongSession(
  client: pg.Client,
  tree: SearchableTree,
  analyzedAt?: number,
): Promise<void> {
  await tree.appendMessage({ id: "m0", role: "user", parts: [{ type: "text", text: "The first turn." }] });
  // Autovacuum must not analyze the table while the test runs: the statistics stay as the writes leave them.
  await client.query("ALTER TABLE assistant_messages SET (autovacuum_enabled = false)");
  const insertTurns = (from: number, to: number) =>
    client.query(`INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content,
        context_text, speaker, time_text, search_state)
      SELECT 'm' || n, 'long', 'm' || (n - 1), CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END,
        '{"id":"m' || n || '","role":"user","parts":[]}',
        CASE WHEN n % 3 = 0 THEN 'Turn ' || n || ' about the harbour and the boats.' ELSE 'Turn ' || n || '.' END,
        'Turn ' || (n - 1), '', '', 2
      FROM generate_series(${from}, ${to}) AS n`);
  if (analyzedAt === undefined) await insertTurns(1, longSessionLength - 1);
  else {
    await insertTurns(1, analyzedAt);
    await client.query("ANALYZE assistant_messages");
    await insertTurns(analyzedAt + 1, longSessionLength - 1);
  }
  await client.query("UPDATE assistant_leaves SET leaf_id = 'm3000' WHERE session_id = 'long'");
  const { rows } = await client.query(
    "SELECT reltuples FROM pg_class WHERE oid = 'assistant_messages'::regclass",
  );
  if (analyzedAt === undefined) expect(Number(rows[0].reltuples)).toBeLessThan(0);
}

/**
 * The plan Postgres keeps for a named statement after five runs (made without its values), run with `EXPLAIN
 * ANALYZE` in a transaction rolled back: its nodes, depth first.
 */
export async function genericPlanOf(client: pg.Client, statement: RecordedStatement): Promise<PlanNode[]> {
  const values = statement.values.map((value) =>
    value === null ? "NULL" : client.escapeLiteral(String(value)),
  );
  await client.query("BEGIN");
  try {
    await client.query(`PREPARE planned_statement AS ${statement.text}`);
    await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
    const { rows } = await client.query(
      `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE planned_statement${values.length > 0 ? `(${values.join(", ")})` : ""}`,
    );
    return nodesOf(rows[0]["QUERY PLAN"][0].Plan as PlanNode);
  } finally {
    await client.query("ROLLBACK");
    await client.query("DEALLOCATE ALL");
  }
}
