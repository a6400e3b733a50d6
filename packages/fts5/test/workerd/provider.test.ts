import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyHandle } from "../../src/handle.js";
import { Fts5SearchProvider } from "../../src/index.js";
import { legacyTable } from "../../src/schema.js";
import { leadingVarint } from "../../src/scope-share.js";
import {
  earlierSchema,
  earlierScopeInsert,
  earlierScopeSelect,
  earlierSet,
} from "../support/earlier-layout-schema.js";

/** Runs `callback` inside a fresh Durable Object, with its SQLite storage. */
async function inDurableObject<T>(callback: (state: DurableObjectState) => Promise<T>): Promise<T> {
  const stub = env.SEARCH_OBJECT.get(env.SEARCH_OBJECT.idFromName(crypto.randomUUID()));
  return runInDurableObject(stub, (_instance, state) => callback(state));
}

/** What an agents Agent offers: a tagged-template `sql` over its storage, and `ctx`. */
function agentLike(state: DurableObjectState) {
  return {
    ctx: state,
    sql<T = Record<string, SqlStorageValue>>(
      strings: TemplateStringsArray,
      ...values: SqlStorageValue[]
    ): T[] {
      return state.storage.sql.exec(strings.join("?"), ...values).toArray() as T[];
    },
  };
}

function keysOf(result: string | null): string[] {
  return (result ?? "")
    .split("\n\n")
    .flatMap((block) => /^\[(.*)\]$/.exec(block.split("\n")[0] ?? "")?.[1] ?? []);
}

describe("on a Durable Object", () => {
  it("new AgentSearchProvider(this) with an agent's tagged-template sql: set, search, get, delete", async () => {
    await inDurableObject(async (state) => {
      const provider = new Fts5SearchProvider(agentLike(state));
      provider.init("knowledge");
      expect(await provider.get()).toBeNull();
      await provider.set("breakfast", "Dani has overnight oats with blueberries every morning.");
      await provider.set("commute", "Dani cycles to the office on a teal bike.");
      await provider.set("commute", "Dani takes the tram when it is below five degrees.");
      expect(await provider.get()).toBe("2 entries indexed.");
      expect(keysOf(await provider.search("What does Dani have in the morning?"))[0]).toBe("breakfast");
      expect(await provider.search("teal")).toBeNull();
      await provider.delete("breakfast");
      expect(await provider.get()).toBe("1 entries indexed.");
    });
  });

  it("ctx.storage directly, and a fresh instance on the same storage sees the entries", async () => {
    await inDurableObject(async (state) => {
      await new Fts5SearchProvider(state.storage, { label: "knowledge" }).set(
        "tides",
        "High tide is at 14:10.",
      );
      const reopened = new Fts5SearchProvider(state, { label: "knowledge" });
      expect(await reopened.get()).toBe("1 entries indexed.");
      expect(keysOf(await reopened.search("when is high tide?"))).toEqual(["tides"]);
    });
  });

  it("indexes each entry's scope as one integer token (a Durable Object binds numbers as REAL)", async () => {
    await inDurableObject(async (state) => {
      await new Fts5SearchProvider(state.storage, { label: "first" }).set("k", "One entry.");
      await new Fts5SearchProvider(state.storage, { label: "second" }).set("k", "Another entry.");
      const scopeTerms = state.storage.sql
        .exec("SELECT term, doc FROM contextblocks_search_terms WHERE col = 'scope' ORDER BY term")
        .toArray();
      expect(scopeTerms).toEqual([
        { term: "1", doc: 1 },
        { term: "2", doc: 1 },
      ]);
      // FTS5's averages record (the index size the search reads) is readable as a blob here too.
      const [averages] = state.storage.sql
        .exec("SELECT block FROM contextblocks_search_index_data WHERE id = 1")
        .toArray();
      expect(leadingVarint(averages?.block)).toBe(2);
    });
  });

  it("keys and contents of any shape round-trip, and hostile queries neither throw nor act as syntax", async () => {
    await inDurableObject(async (state) => {
      // Every result with its text (weak matches have their own tests).
      const provider = new Fts5SearchProvider(state.storage, { label: "knowledge", keyOnlyBelow: 0 });
      const shapes: [string, string][] = [
        ["", "Empty key about zeppelins."],
        ["'; DROP TABLE x; --", "SQL key about zeppelins."],
        ["ключ 東京 🔑", "Unicode key about zeppelins: ёлка 🎈."],
        ["line\nbreak", "Zeppelins\n\nacross lines."],
        ["not", "This zeppelin did not land."],
      ];
      for (const [key, content] of shapes) await provider.set(key, content);
      const all = await provider.search("zeppelins");
      for (const [key, content] of shapes) expect(all).toContain(`[${key}]\n${content}`);
      for (const query of [
        '"',
        "*",
        "NEAR(a b)",
        "(",
        "content:",
        "^x",
        "\u0000",
        " ",
        "",
        "x".repeat(10_240),
      ]) {
        const result = await provider.search(query);
        expect(result === null || typeof result === "string").toBe(true);
      }
      expect(keysOf(await provider.search("NOT"))).toEqual(["not"]);
      expect(await provider.search("content:zeppelin")).toBe(await provider.search("content zeppelin"));
      expect(await provider.get()).toBe(`${shapes.length} entries indexed.`);
    });
  });

  it("copies entries that agents/context wrote, on first use of the label, and leaves them in place", async () => {
    await inDurableObject(async (state) => {
      // The statements agents/context's AgentSearchProvider runs, through an agent's sql tag.
      const agent = agentLike(state);
      agent.sql`
      CREATE VIRTUAL TABLE IF NOT EXISTS cf_agents_search_fts
      USING fts5(
        label UNINDEXED,
        key UNINDEXED,
        content,
        tokenize='porter unicode61'
      )
    `;
      agent.sql`DROP TABLE IF EXISTS cf_agents_search_entries`;
      const agentsSet = (label: string, key: string, content: string) => {
        agent.sql`
      DELETE FROM cf_agents_search_fts
      WHERE label = ${label} AND key = ${key}
    `;
        agent.sql`
      INSERT INTO cf_agents_search_fts (label, key, content)
      VALUES (${label}, ${key}, ${content})
    `;
      };
      agentsSet("knowledge", "ferry", "The ferry to the island leaves at nine.");
      agentsSet("knowledge", "crane", "The harbour crane is serviced on Mondays.");
      agentsSet("docs", "deploys", "Deploys need a manual approval.");

      const provider = new Fts5SearchProvider(agent);
      provider.init("knowledge");
      expect(await provider.get()).toBe("2 entries indexed.");
      expect(keysOf(await provider.search("when does the ferry leave?"))[0]).toBe("ferry");
      const remaining = state.storage.sql
        .exec(`SELECT label, key FROM ${legacyTable} ORDER BY rowid`)
        .toArray();
      // Copied, never deleted: a rollback to agents/context finds its index as it was.
      expect(remaining).toEqual([
        { label: "knowledge", key: "ferry" },
        { label: "knowledge", key: "crane" },
        { label: "docs", key: "deploys" },
      ]);
    });
  });
});

describe("a Durable Object database of the earlier layout (no per-entry context)", () => {
  it("is copied over on first use: every entry kept byte for byte, searchable, and context works after", async () => {
    await inDurableObject(async (state) => {
      const sql = state.storage.sql;
      for (const statement of earlierSchema) sql.exec(statement);
      const written: [string, string][] = [
        ["ferry", "The ferry to the island leaves at nine."],
        ["emoji", "Tides 🌊 and\nnew lines\tkept as they are."],
      ];
      sql.exec(earlierScopeInsert, "", "knowledge");
      const scope = Number(sql.exec(earlierScopeSelect, "", "knowledge").one().id);
      for (const [key, content] of written) sql.exec(earlierSet, scope, keyHandle(scope, key), key, content);
      const rows = () =>
        sql
          .exec("SELECT rowid, scope, handle, key, content FROM contextblocks_search_index ORDER BY rowid")
          .toArray();
      const before = rows();
      const provider = new Fts5SearchProvider(state.storage, { label: "knowledge" });
      expect(await provider.get()).toBe("2 entries indexed.");
      expect(rows()).toEqual(before);
      expect(await provider.search("emoji")).toBe(`[emoji]\n${written[1]?.[1]}`);
      await provider.set("chunk", "Sixteen weeks, ten of them paid in full.", { context: "Parental leave" });
      expect(keysOf(await provider.search("parental leave"))[0]).toBe("chunk");
      expect(
        sql.exec("SELECT name FROM sqlite_master WHERE name = 'contextblocks_search_index_copy'").toArray(),
      ).toEqual([]);
    });
  });
});
