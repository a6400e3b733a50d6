import { ContextBlocks, isContextError, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { isWritableProvider } from "@contextblocks/core/store-kit";
import type { SessionBackend, SessionMessage } from "@contextblocks/sessions";
import type { StatementReport } from "@contextblocks/sql";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  PostgresRunStateStore,
  PostgresSessionRegistry,
  PostgresSkillProvider,
  postgresBackend,
} from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree, type SearchableTree } from "./message-tree.js";

function text(id: string, content: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text: content }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

/** Every text value of every row of every table in the test schema, as one string per row. */
async function everyRow(client: pg.Client): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
    [schema.name],
  );
  const all: string[] = [];
  for (const { name } of tables) {
    const { rows } = await client.query(`SELECT to_jsonb(t)::text AS row FROM ${name} t`);
    for (const row of rows) all.push(`${name}: ${row.row}`);
  }
  return all;
}

describe("PostgresSessionStore appends", () => {
  it("an append is one statement (one round trip), also under a given parent and as a new root", async () => {
    const reports: StatementReport[] = [];
    const client = await schema.client();
    const store = postgresTree(client, {
      sessionId: "trips",
      onStatement: (report) => reports.push(report),
    });
    await store.appendMessage(text("first", "creates the tables"));
    reports.length = 0;
    await store.appendMessage(text("a", "under the latest leaf"));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.text).not.toMatch(/^\s*(BEGIN|COMMIT)/);
    await store.appendMessage(text("b", "under a given parent"), "first");
    await store.appendMessage(text("c", "a new root"), null);
    expect(reports).toHaveLength(3);
    expect(ids(await store.getHistory("a"))).toEqual(["first", "a"]);
    expect(ids(await store.getHistory("b"))).toEqual(["first", "b"]);
    expect(await store.getPathLength("a")).toBe(2);
    expect((await store.getLatestLeaf())?.id).toBe("c");
    await store.appendMessage(text("d", "after the root"));
    expect(ids(await store.getHistory())).toEqual(["c", "d"]);
  });

  it("refuses a duplicate id (INVALID_INPUT) and a missing parent (NOT_FOUND), storing nothing", async () => {
    const store = postgresTree(await schema.client(), "refusals");
    await store.appendMessage(text("a", "one"));
    const duplicate = await store.appendMessage(text("a", "again")).catch((error: unknown) => error);
    expect(isContextError(duplicate) && duplicate.code).toBe("INVALID_INPUT");
    const orphan = await store.appendMessage(text("b", "x"), "missing").catch((error: unknown) => error);
    expect(isContextError(orphan) && orphan.code).toBe("NOT_FOUND");
    expect(ids(await store.getHistory())).toEqual(["a"]);
    await store.appendMessage(text("c", "still chains"));
    expect(ids(await store.getHistory())).toEqual(["a", "c"]);
  });

  it("identical appends racing on two connections store one row, and both succeed (the retry rule)", async () => {
    const [one, two] = await Promise.all(
      [1, 2].map(async () => postgresTree(await schema.client(), "retry-race")),
    );
    await (one as SearchableTree).appendMessage(text("root", "first"));
    for (let round = 0; round < 5; round++) {
      const message = text(`same${round}`, "sent twice at once");
      // Under an explicit parent: the second waits on the pointer row, then meets the first's row.
      await Promise.all([
        (one as SearchableTree).appendMessage(message, "root"),
        (two as SearchableTree).appendMessage(message, "root"),
      ]);
    }
    const tree = await (one as SearchableTree).getTree();
    expect(tree).toHaveLength(6);
    expect(new Set(ids(tree)).size).toBe(6);
  });

  it("an id a table already holds in two sessions (written before the rule) is refused elsewhere, retried in either", async () => {
    const client = await schema.client();
    const first = postgresTree(client, "first");
    const second = postgresTree(client, "second");
    await first.appendMessage(text("twice", "same text"));
    // As an earlier release could store it: its index on id was not unique (schema.sql keeps it so on a table
    // that holds an id twice), and the row copied to another session.
    await client.query("DROP INDEX idx_assistant_msg_id");
    await client.query("CREATE INDEX idx_assistant_msg_id ON assistant_messages (id)");
    await client.query(
      "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) SELECT id, 'second', NULL, role, content FROM assistant_messages WHERE id = 'twice'",
    );
    await expect(first.appendMessage(text("twice", "same text"))).resolves.toMatchObject({ parentId: null });
    await expect(second.appendMessage(text("twice", "same text"), null)).resolves.toMatchObject({
      parentId: null,
    });
    const third = postgresTree(client, "third");
    const refused = await third.appendMessage(text("twice", "same text")).catch((error: unknown) => error);
    expect(isContextError(refused) && refused.code).toBe("INVALID_INPUT");
    expect((refused as Error).message).toMatch(/"twice" already exists in another session;/);
    expect(await third.getTree()).toEqual([]);
  });

  it("first appends racing on eight connections into an empty session chain into one path", async () => {
    const stores = await Promise.all(
      Array.from({ length: 8 }, async () => postgresTree(await schema.client(), "first-race")),
    );
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (stores[index % 8] as SearchableTree).appendMessage(text(`m${index}`, `text ${index}`)),
      ),
    );
    const [first] = stores as [SearchableTree];
    expect(await first.getHistory()).toHaveLength(40);
    expect(await first.getPathLength()).toBe(40);
    const tree = await first.getTree();
    expect(tree).toHaveLength(40);
    expect(tree.filter((node) => node.parentId === null)).toHaveLength(1);
  });

  it("getNode and getTree give each message's parent, in the order they were stored", async () => {
    const store = postgresTree(await schema.client(), "tree");
    await store.appendMessage(text("a", "root"));
    await store.appendMessage(text("b", "child", "assistant"));
    await store.appendMessage(text("c", "branch"), "a");
    expect(await store.getNode("b")).toMatchObject({ id: "b", parentId: "a", role: "assistant" });
    expect(typeof (await store.getNode("b"))?.createdAt).toBe("string");
    expect(await store.getNode("missing")).toBeNull();
    const tree = await store.getTree();
    expect(tree.map((node) => [node.id, node.parentId])).toEqual([
      ["a", null],
      ["b", "a"],
      ["c", "a"],
    ]);
    expect(ids(await store.getTree({ limit: 2 }))).toEqual(["a", "b"]);
  });
});

describe("PostgresRunStateStore and PostgresSessionRegistry", () => {
  it("run state saves, loads, rewrites only what changed and deletes per session", async () => {
    const reports: StatementReport[] = [];
    const store = new PostgresRunStateStore(await schema.client(), {
      onStatement: (report) => reports.push(report),
    });
    expect(await store.load("s1")).toBeNull();
    await store.save("s1", { memory: { turns: 1 }, notes: { text: "nul \u0000 kept" } });
    await store.save("s2", { memory: { turns: 9 } });
    expect(await store.load("s1")).toEqual({ memory: { turns: 1 }, notes: { text: "nul \u0000 kept" } });
    reports.length = 0;
    await store.save("s1", { memory: { turns: 2 } });
    expect(reports.map((report) => report.changes)).toEqual([1, 1]);
    expect(await store.load("s1")).toEqual({ memory: { turns: 2 } });
    await store.delete("s1");
    expect(await store.load("s1")).toBeNull();
    expect(await store.load("s2")).toEqual({ memory: { turns: 9 } });
    await expect(store.save("s1", { bad: [] as never })).rejects.toThrow(/must be an object/);
  });

  it("the registry creates, lists newest first, updates, counts usage and deletes", async () => {
    const registry = new PostgresSessionRegistry(await schema.client());
    expect(await registry.list()).toEqual([]);
    const one = await registry.create("one", "First", { model: "m" });
    expect(one).toMatchObject({ id: "one", name: "First", model: "m", input_tokens: 0, estimated_cost: 0 });
    expect(one.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    await registry.create("two", "Second", { parentSessionId: "one" });
    const duplicate = await registry.create("one", "Again").catch((error: unknown) => error);
    expect(isContextError(duplicate) && duplicate.code).toBe("INVALID_INPUT");
    expect(ids(await registry.list())).toEqual(["two", "one"]);
    await registry.update("one", { name: "Renamed" });
    expect(ids(await registry.list())).toEqual(["one", "two"]);
    await registry.addUsage("one", 10, 5, 0.25);
    await registry.addUsage("one", 1, 1, 0.25);
    expect(await registry.get("one")).toMatchObject({
      name: "Renamed",
      input_tokens: 11,
      output_tokens: 6,
      estimated_cost: 0.5,
    });
    await registry.update("one", { endReason: "compaction" });
    expect((await registry.get("one"))?.end_reason).toBe("compaction");
    const missing = await registry.update("nobody", { name: "x" }).catch((error: unknown) => error);
    expect(isContextError(missing) && missing.code).toBe("NOT_FOUND");
    await expect(registry.addUsage("one", Number.NaN, 0, 0)).rejects.toThrow(/finite/);
    await registry.delete("two");
    expect(ids(await registry.list())).toEqual(["one"]);
  });
});

describe("postgresBackend", () => {
  it("a Postgres-only flow: blocks, skills, run state, registry and search on one pg connection", async () => {
    const client = await schema.client();
    const backend: SessionBackend = postgresBackend(client);
    expect(backend.name).toBe("postgres");
    const info = await backend.registry.create("chat-1", "Support chat");
    const store = backend.messages(info.id);
    const skills = new PostgresSkillProvider(client, { label: "skills", namespace: info.id });
    await skills.set("refunds", "Refunds take five days.", "How refunds work");
    const context = new ContextBlocks(
      [
        { label: "memory", description: "Facts", maxTokens: 200 },
        { label: "skills", provider: skills },
      ],
      backend.prompt(info.id),
      (label) => backend.block(label, info.id),
    );
    await context.setBlock("memory", "The user is called Ada.");
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("The user is called Ada.");
    expect(prompt).toContain("- refunds: How refunds work");
    await store.appendMessage(text("u1", "My parcel from Lisbon never arrived."));
    await store.appendMessage(text("a1", "I am sorry; I will open a refund for the parcel.", "assistant"));
    await backend.runState.save(info.id, { reminder: { turns: 2 } });
    await backend.registry.touch(info.id);

    // A cold start: a new connection and backend read it all back.
    const again = postgresBackend(await schema.client());
    expect(await again.prompt(info.id).get()).toBe(prompt);
    expect(await again.block("memory", info.id).get?.()).toBe("The user is called Ada.");
    expect(ids(await again.messages(info.id).getHistory())).toEqual(["u1", "a1"]);
    expect(await again.runState.load(info.id)).toEqual({ reminder: { turns: 2 } });
    expect((await again.registry.get(info.id))?.name).toBe("Support chat");
    const hits = await again.searchMessages("parcel Lisbon", 5);
    expect(hits[0]).toMatchObject({ id: "u1", sessionId: "chat-1" });
    expect(
      await new PostgresSkillProvider(client, { label: "skills", namespace: info.id }).load("refunds"),
    ).toBe("Refunds take five days.");
  });

  it("deleteSession leaves none of the session's text in any table, and other sessions whole", async () => {
    const client = await schema.client();
    const backend = postgresBackend(client);
    const secret = "zebracrossing";
    for (const id of ["doomed", "kept"]) {
      await backend.registry.create(id, `${id} ${secret} name`);
      const store = backend.messages(id);
      await store.appendMessage(text(`${id}-1`, `the ${secret} message`));
      await store.appendMessage(text(`${id}-2`, `another ${secret} reply`, "assistant"));
      await store.addCompaction(`${secret} summary`, `${id}-1`, `${id}-2`);
      const memory = backend.block("memory", id);
      if (!isWritableProvider(memory)) throw new Error("block() must give a writable provider");
      await memory.set(`${secret} memory`);
      await backend.prompt(id).set(`${secret} prompt`);
      await new PostgresSkillProvider(client, { label: "skills", namespace: id }).set("k", `${secret} skill`);
      await backend.runState.save(id, { plugin: { note: `${secret} state` } });
    }
    const before = await everyRow(client);
    expect(before.filter((row) => row.includes("doomed")).length).toBeGreaterThan(5);

    await backend.deleteSession("doomed");
    const after = await everyRow(client);
    expect(after.filter((row) => row.includes("doomed"))).toEqual([]);
    expect(after.filter((row) => row.includes(secret)).length).toBe(
      before.filter((row) => row.includes(secret) && !row.includes("doomed")).length,
    );
    expect(ids(await backend.messages("kept").getTree())).toEqual(["kept-1", "kept-2"]);
    expect(await backend.messages("kept").getCompactions()).toHaveLength(1);
    expect(await backend.prompt("kept").get()).toBe(`${secret} prompt`);
    expect(await backend.messages("doomed").getHistory()).toEqual([]);
    expect(await backend.registry.get("doomed")).toBeNull();
    expect(await backend.searchMessages(secret, 10)).toHaveLength(2);
    // A session deleted before any table exists, or twice, is a no-op.
    await backend.deleteSession("doomed");
    await postgresBackend(await schema.client()).deleteSession("never");
    await expect(backend.deleteSession("")).rejects.toThrow(/non-empty string/);
    expect(SYSTEM_PROMPT_LABEL).toBe("_system_prompt");
  });
});
