import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";

/**
 * Rows read and written per operation on a Durable Object, as its cursors report them (what Cloudflare
 * bills), for this provider and for the statements agents/context's AgentSearchProvider runs. Sizes 100 and
 * 2,000 by default; FTS5_ROW_SIZES=1000,10000,100000 measures more, FTS5_PRINT_ROWS=1 prints the table.
 */

interface Cost {
  read: number;
  written: number;
}

const sizes = (env.FTS5_ROW_SIZES || "100,2000").split(",").map((size) => Number.parseInt(size, 10));
const print = env.FTS5_PRINT_ROWS === "1";

function entry(index: number): string {
  return `Entry ${index} records topic ${index % 97} for the harbour logbook, tide ${index % 13}, crane ${index % 7}.`;
}

async function inDurableObject<T>(
  name: string,
  callback: (state: DurableObjectState) => Promise<T>,
): Promise<T> {
  const stub = env.SEARCH_OBJECT.get(env.SEARCH_OBJECT.idFromName(name));
  return runInDurableObject(stub, (_instance, state) => callback(state));
}

describe("row cost on a Durable Object", () => {
  it("reads of a new object find nothing and write no row; the first write makes the tables", async () => {
    await inDurableObject("reads-write-nothing", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const provider = new Fts5SearchProvider(client, { label: "knowledge" });
      const namespaced = new Fts5SearchProvider(client, { label: "knowledge", namespace: "user-1" });
      expect(await provider.get()).toBeNull();
      expect(await provider.search("crane")).toBeNull();
      expect(await namespaced.search("crane")).toBeNull();
      expect(reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0)).toBe(0);
      const tables = () =>
        state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name LIKE 'contextblocks_%'").toArray();
      expect(tables()).toEqual([]);
      await provider.set("crane", "The crane is serviced on Tuesdays.");
      expect(tables().length).toBeGreaterThan(0);
      expect(await provider.search("crane")).toContain("[crane]");
      // Another label of a database laid out: still nothing written by its read.
      reports.length = 0;
      expect(await namespaced.get()).toBeNull();
      expect(reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0)).toBe(0);
    });
  });

  it("set, replace, delete and get cost the same rows at every size, and few of them", {
    timeout: 600_000,
  }, async () => {
    await inDurableObject("row-cost", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const measure = async (operation: () => Promise<unknown>): Promise<Cost> => {
        reports.length = 0;
        await operation();
        return {
          read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
          written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
        };
      };
      // The statements agents/context runs, verbatim, on the same storage.
      const agentsSql = (text: string, ...values: (string | number)[]): Cost => {
        const cursor = state.storage.sql.exec(text, ...values);
        cursor.toArray();
        return { read: cursor.rowsRead, written: cursor.rowsWritten };
      };
      const add = (left: Cost, right: Cost): Cost => ({
        read: left.read + right.read,
        written: left.written + right.written,
      });
      agentsSql(`CREATE VIRTUAL TABLE IF NOT EXISTS cf_agents_search_fts
        USING fts5(label UNINDEXED, key UNINDEXED, content, tokenize='porter unicode61')`);
      const agentsSet = (key: string, content: string): Cost =>
        add(
          agentsSql("DELETE FROM cf_agents_search_fts WHERE label = ? AND key = ?", "other", key),
          agentsSql(
            "INSERT INTO cf_agents_search_fts (label, key, content) VALUES (?, ?, ?)",
            "other",
            key,
            content,
          ),
        );

      const provider = new Fts5SearchProvider(client, { label: "harbour" });
      const firstUse = await measure(() => provider.get());
      // A small label beside the large one: its searches read only its own rows.
      const small = new Fts5SearchProvider(client, { label: "small" });
      await small.set("crane-42", "Crane 42 handled topic 42 at the harbour.");
      await small.set("gulls", "Gulls nest on the harbour wall.");
      // Steady state: the first search of a provider also reads its scope's share (two rows, scope-share.ts).
      await provider.search("harbour");
      const table: Record<string, Record<string, Cost>> = {};
      let filled = 0;
      for (const size of sizes) {
        const previous = filled;
        for (; filled < size; filled++) await provider.set(`entry-${filled}`, entry(filled));
        // agents/context's table gets the same entries with its INSERT (its set would scan first).
        state.storage.transactionSync(() => {
          for (let index = previous; index < size; index++) {
            state.storage.sql.exec(
              "INSERT INTO cf_agents_search_fts (label, key, content) VALUES (?, ?, ?)",
              "other",
              `entry-${index}`,
              entry(index),
            );
          }
        });
        const reopened = new Fts5SearchProvider(client, { label: "harbour" });
        // A new instance (a new request to the object) of the small label, past its first search.
        const besideLarge = new Fts5SearchProvider(client, { label: "small" });
        await besideLarge.search("harbour");
        table[size] = {
          "open (new instance, first get)": await measure(() => reopened.get()),
          "get (count)": await measure(() => provider.get()),
          "set (new key)": await measure(() => provider.set("fresh", "A fresh entry about the lighthouse.")),
          "set (replace)": await measure(() =>
            provider.set("fresh", "A changed entry about the lighthouse."),
          ),
          "set (same content)": await measure(() =>
            provider.set("fresh", "A changed entry about the lighthouse."),
          ),
          delete: await measure(() => provider.delete("fresh")),
          "delete (unknown key)": await measure(() => provider.delete("fresh")),
          "search (question)": await measure(() =>
            provider.search("which crane handled topic 42 at the harbour?"),
          ),
          "search (small label beside)": await measure(() =>
            besideLarge.search("which crane handled topic 42 at the harbour?"),
          ),
          "agents: set (new key)": agentsSet("fresh", "A fresh entry about the lighthouse."),
          "agents: set (replace)": agentsSet("fresh", "A changed entry about the lighthouse."),
          "agents: get (COUNT(*))": agentsSql(
            "SELECT COUNT(*) as count FROM cf_agents_search_fts WHERE label = ?",
            "other",
          ),
          "agents: search": agentsSql(
            `SELECT f.key, f.content FROM cf_agents_search_fts f
             WHERE cf_agents_search_fts MATCH ? AND f.label = ? ORDER BY rank LIMIT 10`,
            '"crane" "harbour"',
            "other",
          ),
        };
        agentsSql("DELETE FROM cf_agents_search_fts WHERE label = ? AND key = ?", "other", "fresh");
      }

      if (print) {
        const operations = Object.keys(table[sizes[0] ?? 0] ?? {});
        console.log(`first use (creates the schema): ${firstUse.read} read / ${firstUse.written} written`);
        console.log(
          ["operation".padEnd(32), ...sizes.map((size) => `${size} entries`.padStart(18))].join(""),
        );
        for (const operation of operations) {
          const cells = sizes.map((size) => {
            const cost = table[size]?.[operation];
            return (cost === undefined ? "-" : `${cost.read} / ${cost.written}`).padStart(18);
          });
          console.log([operation.padEnd(32), ...cells].join(""));
        }
      }

      const smallest = table[sizes[0] ?? 0] ?? {};
      const largest = table[sizes[sizes.length - 1] ?? 0] ?? {};
      for (const operation of [
        "open (new instance, first get)",
        "get (count)",
        "set (new key)",
        "set (replace)",
        "set (same content)",
        "delete",
        "delete (unknown key)",
      ]) {
        expect(largest[operation], `${operation} at ${sizes.at(-1)} vs ${sizes[0]} entries`).toEqual(
          smallest[operation],
        );
        expect(largest[operation]?.read, `${operation} rows read`).toBeLessThanOrEqual(6);
        expect(largest[operation]?.written, `${operation} rows written`).toBeLessThanOrEqual(2);
      }
      expect(largest["get (count)"]).toEqual({ read: 1, written: 0 });
      expect(largest["set (new key)"]?.written).toBe(2);
      expect(largest["set (same content)"]?.written).toBe(0);
      // A search is one statement: it reads the rows FTS5 ranks and the ten it returns, at any size.
      expect(largest["search (question)"]?.read).toBeLessThanOrEqual(50);
      // Beside a large label, a small label's search (its token in the MATCH, scope-share.ts) reads its own
      // matches, however large the other label grows.
      expect(largest["search (small label beside)"]).toEqual(smallest["search (small label beside)"]);
      expect(largest["search (small label beside)"]?.read).toBeLessThanOrEqual(25);
      // The comparison is real: agents/context's keyed set and count read every row of its table.
      expect(largest["agents: set (new key)"]?.read).toBeGreaterThanOrEqual(sizes.at(-1) ?? 0);
      expect(largest["agents: get (COUNT(*))"]?.read).toBeGreaterThanOrEqual(sizes.at(-1) ?? 0);
    });
  });

  it("a search's rows read do not grow with the number of labels and namespaces in the database", async () => {
    await inDurableObject("many-scopes", async (state) => {
      let read = 0;
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => {
          read += report.rowsRead ?? 0;
        },
      });
      const provider = new Fts5SearchProvider(client, { label: "knowledge" });
      await provider.set("tides", "High tide at the harbour is at 14:10.");
      await provider.set("crane", "The harbour crane is serviced on Mondays.");
      const searchReads = async () => {
        read = 0;
        await provider.search("when is high tide at the harbour?");
        return read;
      };
      await searchReads(); // the first search also reads the scope's share (scope-share.ts)
      const before = await searchReads();
      for (let index = 0; index < 100; index++) {
        await new Fts5SearchProvider(client, { label: "knowledge", namespace: `session-${index}` }).set(
          "note",
          `Session ${index} notes.`,
        );
      }
      expect(await searchReads()).toBe(before);
    });
  });

  it("a label alone in its database reads only the rows a search returns, however many entries match", async () => {
    await inDurableObject("alone", async (state) => {
      let read = 0;
      const searches: string[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => {
          read += report.rowsRead ?? 0;
          if (report.text.includes("ORDER BY")) searches.push(report.text);
        },
      });
      const provider = new Fts5SearchProvider(client, { label: "knowledge" });
      // A Durable Object bills rows read: FTS5 sorts by rank, whatever the way the storage was passed.
      expect(client.billsRows).toBe(true);
      expect(provider.sort).toBe("rank");
      expect(new Fts5SearchProvider(state, "knowledge").sort).toBe("rank");
      expect(new Fts5SearchProvider(state.storage, "knowledge").sort).toBe("rank");
      const searchReads = async () => {
        read = 0;
        await provider.search("which crane handled topic 42 at the harbour?");
        return read;
      };
      for (let index = 0; index < 50; index++) await provider.set(`entry-${index}`, entry(index));
      await searchReads(); // the first search also reads the scope's share (scope-share.ts)
      const atFifty = await searchReads();
      for (let index = 50; index < 1_000; index++) await provider.set(`entry-${index}`, entry(index));
      // Every entry matches: FTS5 sorts by rank itself and hands over the first ten, so no plan the
      // query planner picks reads (and a Durable Object bills) every match.
      expect(await searchReads()).toBe(atFifty);
      // The question has adjacent pairs, so twice the ten results are read as candidates (pair-bonus.ts).
      expect(atFifty).toBeLessThanOrEqual(22);
      expect(searches.length).toBeGreaterThan(0);
      expect(searches.every((text) => text.includes("ORDER BY rank"))).toBe(true);
    });
  });
});
