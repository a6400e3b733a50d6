import { isContextError } from "@contextblocks/core";
import { NAMESPACE_MARK, rowLabel } from "@contextblocks/core/store-kit";
import { fromBetterSqlite3, type StatementReport } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteContextProvider } from "../../src/index.js";
import { AGENTS_CREATE, AGENTS_SELECT, AGENTS_UPSERT } from "../agents-context-statements.js";
import { HOSTILE_CONTENT, HOSTILE_LABELS } from "../hostile.js";

describe("SqliteContextProvider on better-sqlite3 (file database)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  const tableExists = () =>
    temporary.database
      .prepare("SELECT 1 FROM sqlite_master WHERE name = 'cf_agents_context_blocks'")
      .get() !== undefined;

  it("creates no table before first use, none on a read, and agents' table (plus the prompt's fingerprint) on the first write", async () => {
    const provider = new SqliteContextProvider(temporary.database, { label: "memory", versions: false });
    expect(tableExists()).toBe(false);
    expect(await provider.get()).toBeNull();
    expect(tableExists()).toBe(false);
    await provider.set("first");
    expect(tableExists()).toBe(true);
    const columns = temporary.database.prepare("PRAGMA table_info(cf_agents_context_blocks)").all();
    expect(columns).toEqual([
      { cid: 0, name: "label", type: "TEXT", notnull: 0, dflt_value: null, pk: 1 },
      { cid: 1, name: "content", type: "TEXT", notnull: 1, dflt_value: null, pk: 0 },
      { cid: 2, name: "updated_at", type: "DATETIME", notnull: 0, dflt_value: "CURRENT_TIMESTAMP", pk: 0 },
      // Nullable, after agents' columns: agents' statements neither name nor need it.
      { cid: 3, name: "prompt_fingerprint", type: "TEXT", notnull: 0, dflt_value: null, pk: 0 },
    ]);
    expect(await provider.get()).toBe("first");
    // With history (the default) the table gains two columns: the newest version number, and the newest
    // versions themselves (nullable, after agents' columns).
    await new SqliteContextProvider(temporary.database, "kept").set("first");
    const added = temporary.database.prepare("PRAGMA table_info(cf_agents_context_blocks)").all();
    expect(added.slice(-2)).toEqual([
      { cid: 4, name: "history_version", type: "INTEGER", notnull: 1, dflt_value: "0", pk: 0 },
      { cid: 5, name: "history_recent", type: "TEXT", notnull: 0, dflt_value: null, pk: 0 },
    ]);
  });

  it("upserts one row per label", async () => {
    const provider = new SqliteContextProvider(temporary.database, "memory");
    await provider.set("one");
    await provider.set("two");
    expect(await provider.get()).toBe("two");
    const rows = temporary.database.prepare("SELECT label, content FROM cf_agents_context_blocks").all();
    expect(rows).toEqual([{ label: "memory", content: "two" }]);
  });

  it("keeps labels apart", async () => {
    const memory = new SqliteContextProvider(temporary.database, "memory");
    const notes = new SqliteContextProvider(temporary.database, "notes");
    await memory.set("about the user");
    expect(await notes.get()).toBeNull();
    await notes.set("about the project");
    expect(await memory.get()).toBe("about the user");
    expect(await notes.get()).toBe("about the project");
  });

  it("keeps namespaces apart from each other and from plain agents rows", async () => {
    const plain = new SqliteContextProvider(temporary.database, "memory");
    const tenantA = new SqliteContextProvider(temporary.database, { label: "memory", namespace: "tenant-a" });
    const tenantB = new SqliteContextProvider(temporary.database, { label: "memory", namespace: "tenant-b" });
    await tenantA.set("A's memory");
    expect(await plain.get()).toBeNull();
    expect(await tenantB.get()).toBeNull();
    await plain.set("plain memory");
    await tenantB.set("B's memory");
    expect([await plain.get(), await tenantA.get(), await tenantB.get()]).toEqual([
      "plain memory",
      "A's memory",
      "B's memory",
    ]);
    // The plain row is exactly what agents/context reads.
    expect(temporary.database.prepare(AGENTS_SELECT).get("memory")).toEqual({ content: "plain memory" });
    // No namespaced row is visible to agents under the plain label or any label without the mark.
    const labels = temporary.database
      .prepare("SELECT label FROM cf_agents_context_blocks ORDER BY label")
      .all();
    expect(labels.map((row) => (row as { label: string }).label)).toEqual([
      `${NAMESPACE_MARK}["tenant-a","memory"]`,
      `${NAMESPACE_MARK}["tenant-b","memory"]`,
      "memory",
    ]);
  });

  it("never lets two (namespace, label) pairs alias", async () => {
    const pairs: [string | undefined, string][] = [
      [undefined, "a/b"],
      ["a", "b"],
      ["a/", "b"],
      ["a", "/b"],
      ['a","b', "c"],
      ["a", '","b","c'],
      ["a", "b\u001f"],
      ["a\u001f", "b"],
      ["ns", "x"],
      ["n", "sx"],
      [`${NAMESPACE_MARK}["a"`, "b"],
    ];
    const keys = new Set(pairs.map(([namespace, label]) => rowLabel(label, namespace)));
    expect(keys.size).toBe(pairs.length);
    for (const [index, [namespace, label]] of pairs.entries()) {
      await new SqliteContextProvider(temporary.database, { label, namespace }).set(`value ${index}`);
    }
    for (const [index, [namespace, label]] of pairs.entries()) {
      expect(await new SqliteContextProvider(temporary.database, { label, namespace }).get()).toBe(
        `value ${index}`,
      );
    }
  });

  it("refuses a plain label that starts with the namespace mark", () => {
    expect(() => new SqliteContextProvider(temporary.database, `${NAMESPACE_MARK}["x","y"]`)).toThrow(
      /U\+001F/,
    );
  });

  it("stores hostile labels and content byte for byte", async () => {
    for (const label of HOSTILE_LABELS) {
      for (const content of HOSTILE_CONTENT) {
        const provider = new SqliteContextProvider(temporary.database, label);
        await provider.set(content);
        expect(await provider.get()).toBe(content);
      }
    }
    const count = temporary.database.prepare("SELECT count(*) AS n FROM cf_agents_context_blocks").get();
    expect(count).toEqual({ n: HOSTILE_LABELS.length });
    // One committed write to a file database per pair: seconds on a loaded two-core machine.
  }, 30_000);

  it("reads data written by agents/context's own statements, and agents reads ours", async () => {
    temporary.database.exec(AGENTS_CREATE);
    temporary.database.prepare(AGENTS_UPSERT).run("memory", "written by agents", "written by agents");
    const provider = new SqliteContextProvider(temporary.database, "memory");
    expect(await provider.get()).toBe("written by agents");
    await provider.set("written by contextblocks");
    expect(temporary.database.prepare(AGENTS_SELECT).get("memory")).toEqual({
      content: "written by contextblocks",
    });
  });

  it("takes agents/context's call form with a tagged-template sql source, and init fills a missing label", async () => {
    const agent = {
      sql(strings: TemplateStringsArray, ...values: (string | number | boolean | null)[]) {
        const statement = temporary.database.prepare(strings.join("?"));
        if (statement.reader) return statement.all(...values);
        statement.run(...values);
        return [];
      },
    };
    const explicit = new SqliteContextProvider(agent, "memory");
    explicit.init("ignored");
    expect(explicit.label).toBe("memory");
    await explicit.set("via agent.sql");
    const fromInit = new SqliteContextProvider(agent);
    expect(fromInit.label).toBeUndefined();
    fromInit.init("memory");
    expect(await fromInit.get()).toBe("via agent.sql");
  });

  it("takes a SqlClient and the options form", async () => {
    const client = fromBetterSqlite3(temporary.database);
    const provider = new SqliteContextProvider(client, { label: "memory", namespace: "session-1" });
    expect(provider.namespace).toBe("session-1");
    await provider.set("x");
    expect(await new SqliteContextProvider(client, { namespace: "session-1", label: "memory" }).get()).toBe(
      "x",
    );
  });

  it("refuses bad input with a clear error and leaves stored data untouched", async () => {
    const provider = new SqliteContextProvider(temporary.database, "memory");
    await provider.set("safe");
    for (const bad of [42, null, undefined, { text: "x" }, ["x"]]) {
      const error = await provider.set(bad as unknown as string).catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
      expect((error as Error).message).toMatch(/content of "memory" must be a string/);
    }
    await expect(provider.set("lone \ud800 surrogate")).rejects.toThrow(/lone UTF-16 surrogate at index 5/);
    expect(await provider.get()).toBe("safe");
  });

  it("refuses bad labels, namespaces and a missing label", async () => {
    expect(() => new SqliteContextProvider(temporary.database, "")).toThrow(/non-empty string/);
    expect(() => new SqliteContextProvider(temporary.database, { label: "m", namespace: "" })).toThrow(
      /namespace/,
    );
    expect(() => new SqliteContextProvider(temporary.database, { label: "a\udc00" })).toThrow(/surrogate/);
    await expect(new SqliteContextProvider(temporary.database).get()).rejects.toThrow(/has no label/);
    expect(() => new SqliteContextProvider({} as never, "m")).toThrow(/toSqliteClient: expected/);
  });

  it("refuses a bad label in agents/context's form at construction, with the options form's error", () => {
    // The label-only form takes a shorter path (no options object); its errors must not change.
    for (const bad of ["", "\u001fx", "a\ud800"]) {
      const messageOf = (construct: () => unknown) => {
        try {
          construct();
        } catch (error) {
          return isContextError(error) ? `${error.code} ${error.message}` : String(error);
        }
        return "constructed";
      };
      const labelOnly = messageOf(() => new SqliteContextProvider(temporary.database, bad));
      expect(labelOnly).toMatch(/^INVALID_CONFIG SqliteContextProvider: /);
      expect(labelOnly).toBe(messageOf(() => new SqliteContextProvider(temporary.database, { label: bad })));
    }
  });

  it("writes nothing when the content is unchanged", async () => {
    const reports: StatementReport[] = [];
    const client = fromBetterSqlite3(temporary.database, { onStatement: (report) => reports.push(report) });
    const provider = new SqliteContextProvider(client, "memory");
    await provider.set("same");
    const before = temporary.database.prepare("SELECT updated_at FROM cf_agents_context_blocks").get();
    reports.length = 0;
    await provider.set("same");
    // The block's upsert, its version in the same row (history is on by default), writes nothing; then
    // `SELECT changes()` (a read, no changes reported) tells the store so.
    expect(reports.map((report) => report.changes)).toEqual([0, undefined]);
    await provider.set("different");
    expect(reports.map((report) => report.changes)).toEqual([0, undefined, 1, undefined]);
    expect(before).toBeDefined();
  });

  it("survives closing and reopening the file", async () => {
    await new SqliteContextProvider(temporary.database, "memory").set("durable");
    const reopened = temporary.reopen();
    expect(await new SqliteContextProvider(reopened, "memory").get()).toBe("durable");
  });

  it("propagates errors other than a missing table", async () => {
    temporary.database.exec("CREATE TABLE cf_agents_context_blocks (label TEXT PRIMARY KEY)");
    const provider = new SqliteContextProvider(temporary.database, "memory");
    await expect(provider.get()).rejects.toThrow(/no such column: content/);
  });
});
