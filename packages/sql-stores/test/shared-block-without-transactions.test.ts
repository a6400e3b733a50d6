import { setTimeout as sleep } from "node:timers/promises";
import { ContextBlocks } from "@contextblocks/core";
import { fromTaggedTemplate } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqlContextProvider } from "../src/index.js";

/**
 * A tagged-template source whose `sql` answers asynchronously (a database behind a network hop): its client
 * cannot run a group atomically, so another writer's statement can run between any two of ours.
 */
function asyncSource(database: Database.Database) {
  return {
    async sql(strings: TemplateStringsArray, ...values: unknown[]): Promise<unknown[]> {
      await sleep(Math.random() * 2);
      const text = strings.reduce((query, part, index) => query + (index > 0 ? "?" : "") + part, "");
      const statement = database.prepare(text);
      const rows = statement.reader ? statement.all(...values) : (statement.run(...values), []);
      await sleep(Math.random() * 2);
      return rows;
    },
  };
}

function agentOn(database: Database.Database) {
  const client = fromTaggedTemplate(asyncSource(database));
  const provider = new SqlContextProvider(client, { label: "shared", versions: { retention: 20 } });
  return { provider, context: new ContextBlocks([{ label: "shared", maxTokens: 2_000, provider }]) };
}

describe("a shared block on a client without transactions", () => {
  it("two agents' parallel appends both land once, each with its version, and each caller hears it was written", async () => {
    for (let round = 0; round < 10; round++) {
      const database = new Database(":memory:");
      const one = agentOn(database);
      const two = agentOn(database);
      expect(fromTaggedTemplate(asyncSource(database)).atomic).toBe(false);
      await one.provider.set("Facts:");
      const results = await Promise.all([
        one.context.appendToBlock("shared", "\nfrom one"),
        two.context.appendToBlock("shared", "\nfrom two"),
      ]);
      expect(results).toHaveLength(2);
      const stored = (await one.provider.get()) ?? "";
      expect(stored.match(/from one/g)).toHaveLength(1);
      expect(stored.match(/from two/g)).toHaveLength(1);
      const versions = (await one.provider.versions?.()) ?? [];
      expect(versions[0]?.content).toBe(stored);
      expect(versions.map((version) => version.content)).toEqual([
        ...new Set(versions.map((v) => v.content)),
      ]);
      expect(versions).toHaveLength(3);
      database.close();
    }
  });

  it("setIf answers from its own write: exactly one of two writers expecting the same text applies", async () => {
    for (let round = 0; round < 10; round++) {
      const database = new Database(":memory:");
      const one = agentOn(database);
      const two = agentOn(database);
      await one.provider.set("start");
      const applied = await Promise.all([
        one.provider.setIf("start", "one's"),
        two.provider.setIf("start", "two's"),
      ]);
      expect(applied.filter(Boolean)).toHaveLength(1);
      const winner = applied[0] ? "one's" : "two's";
      expect(await one.provider.get()).toBe(winner);
      expect((await one.provider.versions?.())?.map((version) => version.content)).toEqual([winner, "start"]);
      database.close();
    }
  });
});
