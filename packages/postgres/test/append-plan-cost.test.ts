import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";
import { recordStatements } from "./recorded-statements.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

// Postgres compiles a statement whose estimated cost passes `jit_above_cost` (100,000 by default) with LLVM
// on every run, which takes 100 ms and more: an append's estimate must not grow past it with the session.
describe("PostgresSessionStore append on a long session", () => {
  it("stays under the cost at which Postgres compiles the statement, at 20,000 messages", async () => {
    const client = await schema.client();
    const tree = postgresTree(client, "long");
    await tree.appendMessage({ id: "m0", role: "user", parts: [{ type: "text", text: "The first turn." }] });
    await client.query(`INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content,
        context_text, speaker, time_text, search_state)
      SELECT 'm' || n, 'long', 'm' || (n - 1), CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END,
        '{"id":"m' || n || '","role":"user","parts":[]}', 'Turn ' || n || ' about the harbour and the boats.',
        'Turn ' || (n - 1), '', '', 2
      FROM generate_series(1, 20000) AS n`);
    await client.query("UPDATE assistant_leaves SET leaf_id = 'm20000' WHERE session_id = 'long'");
    await client.query("ANALYZE assistant_messages");
    const sent = recordStatements(client);
    await tree.appendMessage({ id: "next", role: "user", parts: [{ type: "text", text: "One more turn." }] });
    const append = sent.find((statement) => statement.text.includes("INSERT INTO assistant_messages"));
    expect(append).toBeDefined();
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${append?.text}`, append?.values);
    const cost = Number(rows[0]["QUERY PLAN"][0].Plan["Total Cost"]);
    const limit = Number(
      (await client.query("SELECT current_setting('jit_above_cost') AS cost")).rows[0].cost,
    );
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThan(limit);
  });
});
