import { ContextBlocks } from "@contextblocks/core";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresContextProvider } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

const schemas: TestSchema[] = [];
afterEach(async () => {
  for (const schema of schemas.splice(0)) await schema.drop();
});

async function schema(): Promise<TestSchema> {
  const created = await createSchema();
  schemas.push(created);
  return created;
}

function agent(client: ConstructorParameters<typeof PostgresContextProvider>[0]): ContextBlocks {
  const provider = new PostgresContextProvider(client, { label: "profile", versions: { retention: 3 } });
  return new ContextBlocks([{ label: "profile", whenChanged: "remind", provider }]);
}

describe("PostgresContextProvider history on the throwaway cluster", () => {
  it("keeps versions across a restart (new connections), restores as a new version, bounded retention", async () => {
    const database = await schema();
    const firstClient = await database.client();
    const first = agent(firstClient);
    await first.setBlock("profile", "Name: Ada");
    await first.appendToBlock("profile", "City: Paris");
    await first.editBlock("profile", "Paris", "Lyon", { source: { kind: "tool", name: "edit_context" } });
    await first.setBlock("profile", "Name: Ada\nCity: Lyon"); // unchanged: no version
    await firstClient.end();

    const restarted = agent(await database.client());
    const history = await restarted.blockVersions("profile");
    expect(history.map((version) => [version.version, version.content, version.source.name])).toEqual([
      [3, "Name: Ada\nCity: Lyon", "edit_context"],
      [2, "Name: Ada\nCity: Paris", "appendToBlock"],
      [1, "Name: Ada", "setBlock"],
    ]);
    expect(Number.isNaN(Date.parse(history[0]?.writtenAt ?? ""))).toBe(false);
    expect((await restarted.restoreBlock("profile", 1)).content).toBe("Name: Ada");
    expect((await restarted.blockVersions("profile")).map((version) => version.version)).toEqual([4, 3, 2]);
    await expect(restarted.restoreBlock("profile", 1)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("a block shared by two agents on two connections: concurrent edits all land, each version once, and the other agent gets a reminder", async () => {
    const database = await schema();
    const pool = database.pool(4);
    const alice = agent(pool);
    const bob = agent(pool);
    await alice.setBlock("profile", "a: 0\nb: 0\nc: 0\nd: 0");
    await bob.freezeSystemPrompt();
    expect(await bob.reminder()).toBeNull();
    await Promise.all([
      alice.editBlock("profile", "a: 0", "a: 1"),
      bob.editBlock("profile", "b: 0", "b: 1"),
      alice.editBlock("profile", "c: 0", "c: 1"),
      bob.editBlock("profile", "d: 0", "d: 1"),
    ]);
    await alice.load();
    expect(alice.getBlock("profile")?.content).toBe("a: 1\nb: 1\nc: 1\nd: 1");
    const versions = (await alice.blockVersions("profile")).map((version) => version.version);
    expect(versions).toEqual([5, 4, 3]);
    // Alice's writes reach Bob as a reminder; his frozen prompt is unchanged.
    const frozen = await bob.freezeSystemPrompt();
    await alice.editBlock("profile", "a: 1", "a: 2");
    expect(await bob.freezeSystemPrompt()).toBe(frozen);
    expect(await bob.reminder()).toContain("a: 2");
    await expect(bob.editBlock("profile", "a: 0", "a: 9")).rejects.toMatchObject({ code: "NO_MATCH" });
  });

  it("opens an agents@0.22.0 table without the version column: the first write adds it, and numbers start at 1", async () => {
    const database = await schema();
    const client = await database.client();
    await client.query(`CREATE TABLE cf_agents_context_blocks (
  label TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at TIMESTAMPTZ DEFAULT NOW())`);
    await client.query("INSERT INTO cf_agents_context_blocks (label, content) VALUES ('soul', 'old')");
    const soul = new PostgresContextProvider(client, "soul");
    expect(await soul.get()).toBe("old");
    expect(await soul.versions?.()).toEqual([]);
    await soul.set("new");
    await soul.set("newer");
    expect((await soul.versions?.())?.map((version) => [version.version, version.content])).toEqual([
      [2, "newer"],
      [1, "new"],
    ]);
    const { rows } = await client.query("SELECT history_version FROM cf_agents_context_blocks");
    expect(rows).toEqual([{ history_version: "2" }]);
  });
});
