import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";
import { nodesOf, type PlanNode } from "./plan-nodes.js";
import { recordStatements } from "./recorded-statements.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

// The common table expressions whose rows grow with the messages that hold a query word. A CTE has no index:
// a join that read one of them again for every row of another grew with the square of the candidates, and
// Postgres chose such joins on a table it had never analyzed (every estimate one row).
const growing = new Set(["candidate", "scored", "lent", "ranked"]);

/**
 * A 3,001-message session written straight into a table Postgres has never analyzed (as a fresh import leaves
 * it, autovacuum off; or analyzed once after `analyzedAt` of them), searched for "boats" and "harbour" (every third turn holds them): the plan Postgres keeps
 * for the named statement after five runs, made without the values, run with `EXPLAIN ANALYZE`.
 */
async function planOfSearchOnNeverAnalyzedTable(analyzedAt?: number): Promise<PlanNode[]> {
  const client = await schema.client();
  const tree = postgresTree(client, "long");
  await tree.appendMessage({ id: "m0", role: "user", parts: [{ type: "text", text: "The first turn." }] });
  // Autovacuum must not analyze the table while the test runs: the statistics stay as a fresh import leaves them.
  await client.query("ALTER TABLE assistant_messages SET (autovacuum_enabled = false)");
  const insertTurns = (from: number, to: number) =>
    client.query(`INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content,
        context_text, speaker, time_text, search_state)
      SELECT 'm' || n, 'long', 'm' || (n - 1), CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END,
        '{"id":"m' || n || '","role":"user","parts":[]}',
        CASE WHEN n % 3 = 0 THEN 'Turn ' || n || ' about the harbour and the boats.' ELSE 'Turn ' || n || '.' END,
        'Turn ' || (n - 1), '', '', 2
      FROM generate_series(${from}, ${to}) AS n`);
  if (analyzedAt === undefined) await insertTurns(1, 3000);
  else {
    await insertTurns(1, analyzedAt);
    await client.query("ANALYZE assistant_messages");
    await insertTurns(analyzedAt + 1, 3000);
  }
  await client.query("UPDATE assistant_leaves SET leaf_id = 'm3000' WHERE session_id = 'long'");
  const { rows: table } = await client.query(
    "SELECT reltuples FROM pg_class WHERE oid = 'assistant_messages'::regclass",
  );
  if (analyzedAt === undefined) expect(Number(table[0].reltuples)).toBeLessThan(0);

  const sent = recordStatements(client);
  const hits = await tree.searchMessages("Which boats were in the harbour?", 10);
  expect(hits).toHaveLength(10);
  const search = sent.find((statement) => statement.text.includes("candidate AS MATERIALIZED"));
  expect(search).toBeDefined();
  // The plan Postgres keeps for a named statement after five runs: made without the values.
  await client.query(`PREPARE planned_search AS ${search?.text}`);
  await client.query("SET plan_cache_mode = force_generic_plan");
  const values = (search?.values ?? []).map((value) =>
    value === null ? "NULL" : client.escapeLiteral(String(value)),
  );
  const { rows } = await client.query(
    `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE planned_search(${values.join(", ")})`,
  );
  await client.query("RESET plan_cache_mode");
  return nodesOf(rows[0]["QUERY PLAN"][0].Plan as PlanNode);
}

describe("PostgresSessionStore search on a table Postgres has not analyzed since it grew", () => {
  it.each([
    ["never analyzed", undefined],
    ["analyzed at 3 messages", 2],
  ])("reads each growing CTE once, not once per row of another (%s)", async (_, analyzedAt) => {
    const nodes = await planOfSearchOnNeverAnalyzedTable(analyzedAt);
    const scans = nodes.filter(
      (node) => node["Node Type"] === "CTE Scan" && growing.has(node["CTE Name"] ?? ""),
    );
    // The words "boats" and "harbour": a thousand candidates (every third turn).
    expect(
      Math.max(...scans.filter((node) => node["CTE Name"] === "candidate").map((n) => n["Actual Rows"] ?? 0)),
    ).toBeGreaterThanOrEqual(1000);
    for (const scan of scans) {
      expect(scan["Actual Loops"] ?? 0, `loops of a scan of ${scan["CTE Name"]}`).toBeLessThanOrEqual(1);
    }
  });

  // Analyzed when the session held three messages, then grown to 3,001 without another analyze (as autovacuum
  // leaves a session that grew fast): the plan before read each hit's parent through the session's index, all
  // 3,001 messages filtered by id, 30 times.
  it.each([
    ["never analyzed", undefined],
    ["analyzed at 3 messages", 2],
  ])("reads each message it looks up by id alone (%s)", async (_, analyzedAt) => {
    const nodes = await planOfSearchOnNeverAnalyzedTable(analyzedAt);
    // Looked up once per hit, candidate or parent: a scan that found its row among the session's, filtering the
    // others away by id, read the whole session for each.
    const lookups = nodes.filter(
      (node) => node["Relation Name"] === "assistant_messages" && (node["Actual Loops"] ?? 0) > 1,
    );
    expect(lookups.length).toBeGreaterThan(0);
    for (const lookup of lookups) {
      expect(lookup["Index Name"], "the index of a look-up by id").toBe("idx_assistant_msg_id");
      expect(lookup["Rows Removed by Filter"] ?? 0, "rows a look-up by id filtered away").toBe(0);
    }
  });
});
