import { isContextError } from "@contextblocks/core";
import { NAMESPACE_MARK } from "@contextblocks/core/store-kit";
import { type StatementReport, toSqlClient } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteContextProvider } from "../../src/index.js";
import { HOSTILE_CONTENT, HOSTILE_LABELS } from "../hostile.js";
import { inObject, providerInObject } from "./in-object.js";

/** An object shaped like an agents Agent: `ctx`, and `sql` exactly as agents implements it. */
function agentLike(state: DurableObjectState) {
  return {
    ctx: state,
    sql<T = Record<string, string | number | boolean | null>>(
      strings: TemplateStringsArray,
      ...values: (string | number | boolean | null)[]
    ): T[] {
      const query = strings.reduce(
        (text, part, index) => text + part + (index < values.length ? "?" : ""),
        "",
      );
      return [...state.storage.sql.exec(query, ...values)] as T[];
    },
  };
}

function tableExists(state: DurableObjectState): boolean {
  return (
    state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'cf_agents_context_blocks'").toArray()
      .length === 1
  );
}

describe("SqliteContextProvider in a Durable Object", () => {
  it("creates no table before first use, none on a read, and the table on the first write", async () => {
    await inObject("lazy", async (state) => {
      const provider = new SqliteContextProvider(state.storage, "memory");
      expect(tableExists(state)).toBe(false);
      expect(await provider.get()).toBeNull();
      expect(tableExists(state)).toBe(false);
      await provider.set("first");
      expect(tableExists(state)).toBe(true);
      expect(await provider.get()).toBe("first");
    });
  });

  it("persists across calls into the object (a provider living in the object)", async () => {
    const provider = providerInObject("persist", { label: "memory" });
    await provider.set("remembered");
    expect(await provider.reopen().get()).toBe("remembered");
    expect(await inObject("persist", (state) => new SqliteContextProvider(state, "memory").get())).toBe(
      "remembered",
    );
  });

  it("keeps labels and namespaces apart", async () => {
    await inObject("isolation", async (state) => {
      const plain = new SqliteContextProvider(state.storage, "memory");
      const other = new SqliteContextProvider(state.storage, "notes");
      const tenantA = new SqliteContextProvider(state.storage, { label: "memory", namespace: "tenant-a" });
      const tenantB = new SqliteContextProvider(state.storage, { label: "memory", namespace: "tenant-b" });
      await tenantA.set("A");
      expect([await plain.get(), await other.get(), await tenantB.get()]).toEqual([null, null, null]);
      await plain.set("plain");
      await other.set("notes");
      await tenantB.set("B");
      expect([await plain.get(), await other.get(), await tenantA.get(), await tenantB.get()]).toEqual([
        "plain",
        "notes",
        "A",
        "B",
      ]);
      const labels = state.storage.sql
        .exec("SELECT label FROM cf_agents_context_blocks ORDER BY label")
        .toArray();
      expect(labels.map((row) => row.label)).toEqual([
        `${NAMESPACE_MARK}["tenant-a","memory"]`,
        `${NAMESPACE_MARK}["tenant-b","memory"]`,
        "memory",
        "notes",
      ]);
    });
  });

  it("stores hostile labels and content byte for byte", async () => {
    await inObject("hostile", async (state) => {
      for (const label of HOSTILE_LABELS) {
        for (const content of HOSTILE_CONTENT) {
          const provider = new SqliteContextProvider(state.storage, label);
          await provider.set(content);
          expect(await provider.get()).toBe(content);
        }
      }
      const [row] = state.storage.sql.exec("SELECT count(*) AS n FROM cf_agents_context_blocks").toArray();
      expect(row?.n).toBe(HOSTILE_LABELS.length);
    });
  });

  it("reads rows written by agents/context's exact statements, and agents reads ours", async () => {
    await inObject("agents-compat", async (state) => {
      const agent = agentLike(state);
      const label = "memory";
      const content = "written by agents/context";
      // agents/context's AgentContextProvider: ensureTable() then set(content).
      agent.sql`
      CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
        label TEXT PRIMARY KEY,
        content TEXT NOT NULL,
        updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
      )
    `;
      agent.sql`
      INSERT INTO cf_agents_context_blocks (label, content)
      VALUES (${label}, ${content})
      ON CONFLICT(label) DO UPDATE SET content = ${content}, updated_at = CURRENT_TIMESTAMP
    `;
      // agents/context's call form, with `this` an agent.
      const provider = new SqliteContextProvider(agent, "memory");
      expect(await provider.get()).toBe(content);
      await provider.set("written by contextblocks");
      const rows = agent.sql<{ content: string }>`
      SELECT content FROM cf_agents_context_blocks WHERE label = ${label}
    `;
      expect(rows[0]?.content).toBe("written by contextblocks");
    });
  });

  it("accepts ctx, ctx.storage, an agent and a SqlClient alike", async () => {
    await inObject("sources", async (state) => {
      await new SqliteContextProvider(state, "memory").set("shared row");
      const sources = [state, state.storage, agentLike(state), toSqlClient(state.storage)];
      for (const source of sources)
        expect(await new SqliteContextProvider(source, "memory").get()).toBe("shared row");
      const fromInit = new SqliteContextProvider(agentLike(state));
      fromInit.init("memory");
      expect(await fromInit.get()).toBe("shared row");
    });
  });

  it("refuses bad input with a clear error and leaves stored data untouched", async () => {
    await inObject("bad-input", async (state) => {
      const provider = new SqliteContextProvider(state.storage, "memory");
      await provider.set("safe");
      const error = await provider.set(42 as unknown as string).catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
      expect((error as Error).message).toMatch(/content of "memory" must be a string, got number \d+/);
      await expect(provider.set("\udfff")).rejects.toThrow(/surrogate/);
      expect(await provider.get()).toBe("safe");
    });
  });

  it("costs one row read for get of an existing row, and nothing for a missing table or row", async () => {
    await inObject("get-cost", async (state) => {
      const reports: StatementReport[] = [];
      const provider = new SqliteContextProvider(state.storage, {
        label: "memory",
        onStatement: (report) => reports.push(report),
      });
      expect(await provider.get()).toBeNull();
      expect(reports).toEqual([]); // the statement failed (no table): nothing ran, nothing billed
      await provider.set("x");
      reports.length = 0;
      expect(await provider.get()).toBe("x");
      expect(reports).toEqual([
        { text: "SELECT content FROM cf_agents_context_blocks WHERE label = ?", rowsRead: 1, rowsWritten: 0 },
      ]);
    });
  });
});
