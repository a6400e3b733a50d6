import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";
import { nodesOf, type PlanNode } from "./plan-nodes.js";
import { recordStatements } from "./recorded-statements.js";
import { genericPlanOf, staleStatistics, writeLongSession } from "./stale-statistics.js";

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

/** The plan of a search for "boats" and "harbour" (a thousand candidates) in the session `writeLongSession` writes. */
async function planOfSearchOnLongSession(analyzedAt?: number): Promise<PlanNode[]> {
  const client = await schema.client();
  const tree = postgresTree(client, "long");
  await writeLongSession(client, tree, analyzedAt);
  const sent = recordStatements(client);
  const hits = await tree.searchMessages("Which boats were in the harbour?", 10);
  expect(hits).toHaveLength(10);
  const search = sent.find((statement) => statement.text.includes("candidate AS MATERIALIZED"));
  if (search === undefined) throw new Error("no search statement was sent");
  return genericPlanOf(client, search);
}

describe("PostgresSessionStore search on a table Postgres has not analyzed since it grew", () => {
  it.each(staleStatistics)(
    "reads each growing CTE once, not once per row of another (%s)",
    async (_, analyzedAt) => {
      const nodes = await planOfSearchOnLongSession(analyzedAt);
      const scans = nodes.filter(
        (node) => node["Node Type"] === "CTE Scan" && growing.has(node["CTE Name"] ?? ""),
      );
      // The words "boats" and "harbour": a thousand candidates (every third turn).
      expect(
        Math.max(
          ...scans.filter((node) => node["CTE Name"] === "candidate").map((n) => n["Actual Rows"] ?? 0),
        ),
      ).toBeGreaterThanOrEqual(1000);
      for (const scan of scans) {
        expect(scan["Actual Loops"] ?? 0, `loops of a scan of ${scan["CTE Name"]}`).toBeLessThanOrEqual(1);
      }
    },
  );

  // Analyzed when the table held three messages (an ANALYZE run right after the tables were created), then grown
  // to 3,001 without another: the plan before read each hit's parent through the session's index, all 3,001
  // messages filtered by id, 30 times.
  it.each(staleStatistics)("reads each message it looks up by id alone (%s)", async (_, analyzedAt) => {
    const nodes = await planOfSearchOnLongSession(analyzedAt);
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

describe("PostgresSessionStore search's candidates", () => {
  it("carry each term's weight and own-text flag, two columns a term, not a flag for each field", async () => {
    const client = await schema.client();
    const tree = postgresTree(client, "fields");
    for (const [index, text] of ["The boats left the harbour.", "Fishing boats.", "A calm day."].entries()) {
      await tree.appendMessage({ id: `f${index}`, role: "user", parts: [{ type: "text", text }] });
    }
    const sent = recordStatements(client);
    // Three terms ("fishing", "boats", "harbour") and one pair ("fishing boats"): four in all.
    await tree.searchMessages("Which fishing boats were in the harbour?", 10);
    const search = sent.find((statement) => statement.text.includes("candidate AS MATERIALIZED"));
    if (search === undefined) throw new Error("no search statement was sent");
    const values = search.values.map((value) =>
      value === null ? "NULL" : client.escapeLiteral(String(value)),
    );
    await client.query(`PREPARE verbose_statement AS ${search.text}`);
    try {
      const { rows } = await client.query(
        `EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE verbose_statement(${values.join(", ")})`,
      );
      const nodes = nodesOf(rows[0]["QUERY PLAN"][0].Plan as PlanNode);
      const output = nodes.find((node) => node["Subplan Name"] === "CTE candidate")?.Output ?? [];
      // Its fields were tested where the row was read: what ranking needs of the row (nine columns), then per
      // term its weight (NULL where no field holds it) and whether its own text holds it.
      expect(output).toHaveLength(9 + 2 * 4);
      const terms = output.slice(9);
      for (const [index, column] of terms.entries()) {
        const term = Math.floor(index / 2);
        if (index % 2 === 0) expect(column).toMatch(new RegExp(`^CASE WHEN \\(flagged\\.text_${term} OR`));
        else expect(column).toBe(`flagged.text_${term}`);
      }
    } finally {
      await client.query("DEALLOCATE verbose_statement");
    }
  });
});
