import type pg from "pg";
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

/** `count` messages of `sessionId` about the harbour and its boats, written as an append writes them. */
async function insertMessages(client: pg.Client, sessionId: string, from: number, count: number) {
  await client.query(
    `INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content, context_text,
       speaker, time_text, search_state)
     SELECT $1 || n, $1, CASE WHEN n = $2 THEN NULL ELSE $1 || (n - 1) END, 'user',
       '{"id":"' || $1 || n || '","role":"user","parts":[]}', 'Turn ' || n || ' about the harbour and the boats.',
       'Turn ' || (n - 1), '', '', 2
     FROM generate_series($2::int, $2::int + $3::int - 1) AS n`,
    [sessionId, from, count],
  );
  await client.query("UPDATE assistant_leaves SET leaf_id = $1 WHERE session_id = $2", [
    `${sessionId}${from + count - 1}`,
    sessionId,
  ]);
}

/** Every row each scan of the plan read (its rows per loop times its loops), by the scan and its index. */
async function rowsReadBySearch(client: pg.Client, text: string, values: unknown[], generic: boolean) {
  const literals = values.map((value) => (value === null ? "NULL" : client.escapeLiteral(String(value))));
  await client.query(`PREPARE shared_search AS ${text}`);
  await client.query(`SET plan_cache_mode = ${generic ? "force_generic_plan" : "force_custom_plan"}`);
  const { rows } = await client.query(
    `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE shared_search(${literals.join(", ")})`,
  );
  await client.query("RESET plan_cache_mode");
  await client.query("DEALLOCATE shared_search");
  return nodesOf(rows[0]["QUERY PLAN"][0].Plan as PlanNode)
    .filter((node) => /^(Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)$/.test(node["Node Type"]))
    .map((node) => ({
      scan: `${node["Node Type"]} ${node["Index Name"] ?? node["Relation Name"] ?? ""}`,
      rows: (node["Actual Rows"] ?? 0) * (node["Actual Loops"] ?? 0),
    }));
}

// The GIN indexes of the search fields hold every session's messages: a search that took its candidates from
// them read every match in the table, so a session's search slowed down as other sessions grew.
describe("PostgresSessionStore search beside other sessions that match the same words", () => {
  it.each([
    { case: "a small session, analyzed", own: 12, others: 3000, analyze: true },
    { case: "a small session, the table never analyzed", own: 12, others: 20000, analyze: false },
    {
      case: "a session over the limit but under half the table, analyzed",
      own: 2500,
      others: 6000,
      analyze: true,
    },
  ])("reads no more rows than the session holds: $case", async ({ own, others, analyze }) => {
    const client = await schema.client();
    const tree = postgresTree(client, "mine");
    await tree.appendMessage({ id: "mine0", role: "user", parts: [{ type: "text", text: "Hello." }] });
    await client.query("ALTER TABLE assistant_messages SET (autovacuum_enabled = false)");
    await insertMessages(client, "mine", 1, own - 1);
    const crowd = postgresTree(client, "crowd");
    await crowd.appendMessage({ id: "crowd0", role: "user", parts: [{ type: "text", text: "Hello." }] });
    await insertMessages(client, "crowd", 1, others - 1);
    if (analyze) await client.query("ANALYZE assistant_messages");

    const sent = recordStatements(client);
    const hits = await tree.searchMessages("Which boats were in the harbour?", 10);
    expect(hits).toHaveLength(10);
    expect(hits.every((hit) => hit.id.startsWith("mine"))).toBe(true);
    const search = sent.find((statement) => statement.text.includes("candidate AS MATERIALIZED"));
    expect(search).toBeDefined();
    for (const generic of [false, true]) {
      const scans = await rowsReadBySearch(client, search?.text ?? "", search?.values ?? [], generic);
      for (const { scan, rows } of scans) {
        expect(rows, `${generic ? "generic" : "custom"} plan: rows read by ${scan}`).toBeLessThanOrEqual(own);
      }
    }
  });
});
