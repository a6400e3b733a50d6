import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PostgresContextProvider } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

const schemas: TestSchema[] = [];
afterEach(async () => {
  for (const schema of schemas.splice(0)) await schema.drop();
});

type Client = ConstructorParameters<typeof PostgresContextProvider>[0];

function context(client: Client, configs: ContextConfig[], onDrift = vi.fn()): ContextBlocks {
  const blocks = configs.map((config) => ({
    ...config,
    provider: new PostgresContextProvider(client, { label: config.label, versions: false }),
  }));
  return new ContextBlocks(blocks, new PostgresContextProvider(client, "_system_prompt"), null, { onDrift });
}

const BLOCKS: ContextConfig[] = [{ label: "memory", description: "Facts", maxTokens: 500 }];

describe("the configuration fingerprint on Postgres (throwaway cluster)", () => {
  it("a table without the column is read with the full check, then the next write adds it; a changed configuration is drift", async () => {
    const database = await schema();
    const client = await database.client();
    // The table as agents/context (or an earlier release) created it, holding a prompt without a fingerprint.
    await client.query(
      "CREATE TABLE cf_agents_context_blocks (label TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at TIMESTAMPTZ DEFAULT NOW())",
    );
    const prompt = await context(client, BLOCKS).previewSystemPrompt();
    await client.query(
      "INSERT INTO cf_agents_context_blocks (label, content) VALUES ('_system_prompt', $1)",
      [prompt],
    );

    const onDrift = vi.fn();
    const cold = context(client, BLOCKS, onDrift);
    expect(await cold.freezeSystemPrompt()).toBe(prompt);
    expect(onDrift).not.toHaveBeenCalled();
    await cold.refreshSystemPrompt();
    const { rows } = await client.query<{ prompt_fingerprint: string | null }>(
      "SELECT prompt_fingerprint FROM cf_agents_context_blocks WHERE label = '_system_prompt'",
    );
    expect(rows[0]?.prompt_fingerprint).toMatch(/^cb1\./);

    const same = vi.fn();
    expect(await context(client, BLOCKS, same).freezeSystemPrompt()).toBe(prompt);
    expect(same).not.toHaveBeenCalled();
    const changed = vi.fn();
    await context(client, [{ ...BLOCKS[0], maxTokens: 900 } as ContextConfig], changed).freezeSystemPrompt();
    expect(changed).toHaveBeenCalledTimes(1);
    await client.end();
  });
});

async function schema(): Promise<TestSchema> {
  const created = await createSchema();
  schemas.push(created);
  return created;
}
