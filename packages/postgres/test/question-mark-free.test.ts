import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  PostgresContextProvider,
  PostgresRunStateStore,
  PostgresSearchProvider,
  PostgresSessionRegistry,
  PostgresSkillProvider,
} from "../src/index.js";
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

// Cloudflare agents' `PostgresConnection` takes every `?` of a statement as a placeholder (its users' adapters number
// them in the text, string literals and comments included), so a statement of
// ours run through it must hold none: no jsonb `?` operator, no regular expression's `(?=`, no `?` in a comment.
describe("statements sent to Postgres", () => {
  it("hold no question mark, through every kind of operation", async () => {
    const client = await schema.client();
    const sent = recordStatements(client);
    const tree = postgresTree(client, "s");
    for (let turn = 0; turn < 6; turn++) {
      await tree.appendMessage({
        id: `m${turn}`,
        role: turn % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: `Turn ${turn} about the harbour?` }],
      });
    }
    await tree.appendMessage(
      { id: "aside", role: "user", parts: [{ type: "text", text: "An aside?" }] },
      "m2",
    );
    await tree.updateMessage({ id: "m3", role: "assistant", parts: [{ type: "text", text: "Edited?" }] });
    await tree.deleteMessages(["aside"]);
    await client.query("DELETE FROM assistant_leaves");
    await tree.getHistory();
    await tree.getRecentHistory(undefined, 10_000);
    await tree.getBranches("m2");
    await tree.getTree();
    await tree.searchMessages("Which harbour? When?", 10);
    await tree.addCompaction("Summary?", "m0", "m1");
    await tree.setTokenCalibration(1.1);
    const search = new PostgresSearchProvider(client, { label: "notes" });
    await search.set("a?", "What is in the harbour?");
    await search.search("harbour?");
    await tree.clearMessages();
    const block = new PostgresContextProvider(client, { label: "memory?" });
    await block.set("likes tea?");
    await block.setIf("likes tea?", "likes coffee?");
    await block.get();
    const skills = new PostgresSkillProvider(client, { label: "skills" });
    await skills.set("brew?", "How to brew?", "brewing?");
    await skills.load("brew?");
    await skills.get();
    await skills.delete("brew?");
    const runs = new PostgresRunStateStore(client);
    await runs.save("s", {});
    await runs.load("s");
    await runs.delete("s");
    const registry = new PostgresSessionRegistry(client);
    await registry.create("r?", "A session?");
    await registry.list();
    await registry.update("r?", { name: "Renamed?" });
    await registry.touch("r?");
    await registry.addUsage("r?", 1, 1, 0.01);
    await registry.get("r?");
    await registry.delete("r?");
    expect(sent.length).toBeGreaterThan(40);
    for (const statement of sent) {
      expect(statement.text.includes("?"), statement.text.slice(0, 200)).toBe(false);
    }
  });
});
