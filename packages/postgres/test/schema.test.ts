import { readFileSync } from "node:fs";
import { type ContextError, isContextError } from "@contextblocks/core";
import { AGENTS_MESSAGES_TABLE } from "@contextblocks/test-kit/postgres";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createTables,
  PostgresContextProvider,
  PostgresRunStateStore,
  PostgresSearchProvider,
  PostgresSessionRegistry,
  PostgresSkillProvider,
} from "../src/index.js";
import { POSTGRES_SCHEMA } from "../src/store-kit.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

async function tables(): Promise<string[]> {
  const client = await schema.client();
  const { rows } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
    [schema.name],
  );
  return rows.map((row) => row.name);
}

/** The definition of the index on `assistant_messages (id)`. */
async function idIndex(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ definition: string }>(
    "SELECT indexdef AS definition FROM pg_indexes WHERE schemaname = $1 AND indexname = 'idx_assistant_msg_id'",
    [schema.name],
  );
  return rows.map((row) => row.definition);
}

describe("schema", () => {
  it("schema.sql is POSTGRES_SCHEMA, byte for byte", () => {
    const shipped = readFileSync(new URL("../schema.sql", import.meta.url), "utf8");
    expect(shipped).toBe(POSTGRES_SCHEMA);
  });

  it("schema.sql runs as is, and providers with createTables: false use its tables", async () => {
    const client = await schema.client();
    await client.query(POSTGRES_SCHEMA);
    await client.query(POSTGRES_SCHEMA); // idempotent
    const { rows } = await client.query<{ name: string }>(
      "SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND indexdef LIKE '%USING gin%' ORDER BY 1",
      [schema.name],
    );
    expect(rows.map((row) => row.name)).toEqual([
      "idx_assistant_msg_context_fts",
      "idx_assistant_msg_fts",
      "idx_assistant_msg_time_fts",
      "idx_search_entries_fts",
      "idx_search_entries_key_fts",
    ]);
    // Every search index writes its entries into the index itself: a pending list would be scanned in full
    // by every search until a vacuum emptied it.
    const options = await client.query<{ name: string; options: string[] | null }>(
      `SELECT c.relname AS name, c.reloptions AS options FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname IN (SELECT indexname FROM pg_indexes WHERE schemaname = $1
         AND indexdef LIKE '%USING gin%') ORDER BY 1`,
      [schema.name],
    );
    expect(options.rows.map((row) => [row.name, row.options])).toEqual(
      rows.map((row) => [row.name, ["fastupdate=off"]]),
    );
    // The search fields stay in the row (MAIN), where a search tests them: a message over about 2 kB had them
    // moved to the TOAST table, fetched from there again for every term a search tested.
    const storage = await client.query<{ name: string; storage: string }>(
      `SELECT a.attname AS name, a.attstorage AS storage FROM pg_attribute a
       WHERE a.attrelid = to_regclass($1 || '.assistant_messages') AND a.attname LIKE '%\\_tsv' ORDER BY 1`,
      [schema.name],
    );
    expect(storage.rows).toEqual([
      { name: "content_tsv", storage: "m" },
      { name: "context_tsv", storage: "m" },
      { name: "time_tsv", storage: "m" },
    ]);
    // The lookup of an id in any session (an append's check) has its own index, unique: two appends of one
    // id to two sessions at once cannot both store it.
    expect(await idIndex(client)).toEqual([
      `CREATE UNIQUE INDEX idx_assistant_msg_id ON ${schema.name}.assistant_messages USING btree (id)`,
    ]);
    const memory = new PostgresContextProvider(client, { label: "memory", createTables: false });
    await memory.set("kept");
    expect(await memory.get()).toBe("kept");
    // History (on by default) uses the schema's history table and the version column.
    await memory.set("kept again");
    expect((await memory.versions?.())?.map((version) => [version.version, version.content])).toEqual([
      [2, "kept again"],
      [1, "kept"],
    ]);
    const knowledge = new PostgresSearchProvider(client, { label: "knowledge", createTables: false });
    await knowledge.set("kb-one", "The ferry leaves at nine.");
    expect(await knowledge.search("When does the ferry leave?")).toBe("[kb-one]\nThe ferry leaves at nine.");
  });

  it("createTables on a session table that already holds an id in two sessions names the id and changes nothing", async () => {
    const client = await schema.client();
    // As Cloudflare agents' Sessions API creates it (its key is (session_id, id)), with one id twice.
    await client.query(AGENTS_MESSAGES_TABLE);
    await client.query(
      "INSERT INTO assistant_messages (id, session_id, role, content) VALUES ('m', 'one', 'user', '{}'), ('m', 'two', 'user', '{}')",
    );
    const refused = await createTables(client).catch((error: unknown) => error);
    expect(isContextError(refused) && (refused as ContextError).code).toBe("PROVIDER_FAILED");
    expect((refused as Error).message).toContain("1 message id is stored in more than one session");
    expect((refused as Error).message).toContain('"m" in sessions "one", "two"');
    // schema.sql as is fails on Postgres' own unique violation, in one transaction: nothing is left half done.
    await expect(client.query(`BEGIN; ${POSTGRES_SCHEMA}; COMMIT`)).rejects.toThrow(/idx_assistant_msg_id/);
    await client.query("ROLLBACK");
    expect(await idIndex(client)).toEqual([]);
    expect(await tables()).toEqual(["assistant_messages"]);
  });

  it("createTables: false on a database without the tables says to run schema.sql, and creates nothing", async () => {
    const client = await schema.client();
    const memory = new PostgresContextProvider(client, { label: "memory", createTables: false });
    const knowledge = new PostgresSearchProvider(client, { label: "knowledge", createTables: false });
    for (const call of [
      () => memory.get(),
      () => memory.set("x"),
      () => knowledge.get(),
      () => knowledge.set("k", "x"),
    ]) {
      const error = await call().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isContextError(error)).toBe(true);
      expect((error as ContextError).code).toBe("PROVIDER_FAILED");
      expect((error as ContextError).message).toMatch(/schema\.sql/);
    }
    expect(await tables()).toEqual([]);
  });

  it("by default a read creates nothing and a first write creates only its own table", async () => {
    const client = await schema.client();
    const memory = new PostgresContextProvider(client, "memory");
    expect(await memory.get()).toBeNull();
    const knowledge = new PostgresSearchProvider(client, "knowledge");
    expect(await knowledge.get()).toBeNull();
    expect(await knowledge.search("anything")).toBeNull();
    expect(await tables()).toEqual([]);
    await memory.set("first");
    // History is on by default: the block's table and its versions.
    expect(await tables()).toEqual([
      "cf_agents_context_blocks",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
    ]);
    expect(await memory.get()).toBe("first");
    await knowledge.set("k", "entry");
    expect(await tables()).toEqual([
      "cf_agents_context_blocks",
      "cf_agents_search_entries",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
    ]);
    await new PostgresSkillProvider(client, "skills").set("deploy", "Run the script.");
    await new PostgresRunStateStore(client).save("s", { memory: { turns: 1 } });
    await new PostgresSessionRegistry(client).create("s", "Chat");
    expect(await tables()).toEqual([
      "assistant_sessions",
      "cf_agents_context_blocks",
      "cf_agents_search_entries",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
      "contextblocks_run_state",
      "contextblocks_skills",
    ]);
    await postgresTree(client, "s").appendMessage({ id: "m", role: "user", parts: [] });
    expect(await tables()).toEqual([
      "assistant_compactions",
      "assistant_leaves",
      "assistant_messages",
      "assistant_sessions",
      "assistant_token_calibration",
      "cf_agents_context_blocks",
      "cf_agents_search_entries",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
      "contextblocks_run_state",
      "contextblocks_schema",
      "contextblocks_skills",
    ]);
  });

  it("first writers on eight connections at once create the tables once, without an error", async () => {
    const providers = await Promise.all(
      Array.from(
        { length: 8 },
        async (_, index) => new PostgresContextProvider(await schema.client(), `block-${index}`),
      ),
    );
    await Promise.all(providers.map((provider, index) => provider.set(`value ${index}`)));
    expect(await Promise.all(providers.map((provider) => provider.get()))).toEqual(
      providers.map((_, index) => `value ${index}`),
    );
  });

  it("createTables(pg.Client) creates the tables the providers then use with createTables: false", async () => {
    const client = await schema.client();
    await createTables(client);
    await createTables(client);
    expect(await tables()).toEqual([
      "assistant_compactions",
      "assistant_leaves",
      "assistant_messages",
      "assistant_sessions",
      "assistant_token_calibration",
      "cf_agents_context_blocks",
      "cf_agents_search_entries",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
      "contextblocks_run_state",
      "contextblocks_schema",
      "contextblocks_skill_history",
      "contextblocks_skills",
    ]);
    const memory = new PostgresContextProvider(client, { label: "memory", createTables: false });
    await memory.set("kept");
    expect(await memory.get()).toBe("kept");
    // History (on by default) uses the schema's history table and the version column.
    await memory.set("kept again");
    expect((await memory.versions?.())?.map((version) => [version.version, version.content])).toEqual([
      [2, "kept again"],
      [1, "kept"],
    ]);
  });

  it("schema.sql upgrades a database from before history: agents' table and an earlier history table", async () => {
    const client = await schema.client();
    await client.query(`CREATE TABLE cf_agents_context_blocks (
  label TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at TIMESTAMPTZ DEFAULT NOW())`);
    await client.query(`CREATE TABLE contextblocks_block_history (
  label TEXT NOT NULL, slot INTEGER NOT NULL, version BIGINT NOT NULL, content TEXT NOT NULL,
  source TEXT NOT NULL, written_at TIMESTAMPTZ NOT NULL DEFAULT NOW(), PRIMARY KEY (label, slot))`);
    await client.query(
      "INSERT INTO cf_agents_context_blocks (label, content) VALUES ('profile', 'v2'), ('soul', 'x')",
    );
    await client.query(`INSERT INTO contextblocks_block_history (label, slot, version, content, source) VALUES
  ('profile', 1, 1, 'v1', '{"kind":"api","name":"set"}'), ('profile', 2, 2, 'v2', '{"kind":"api","name":"set"}')`);
    await client.query(POSTGRES_SCHEMA);
    await client.query(POSTGRES_SCHEMA); // idempotent
    const { rows } = await client.query<{ label: string; history_version: string }>(
      "SELECT label, history_version FROM cf_agents_context_blocks ORDER BY label",
    );
    expect(rows).toEqual([
      { label: "profile", history_version: "2" },
      { label: "soul", history_version: "0" },
    ]);
    const profile = new PostgresContextProvider(client, { label: "profile", createTables: false });
    await profile.set("v3");
    expect((await profile.versions?.())?.map((version) => version.version)).toEqual([3, 2, 1]);
  });
});
