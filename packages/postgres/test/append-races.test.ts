import type { MessageRecord } from "@contextblocks/sessions/store-kit";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

// An append is one statement: its reads see the snapshot taken when it starts, and a writer that commits
// while it waits for the session's pointer row is not in that snapshot. Each test makes that happen for
// certain: a third connection holds the pointer rows, the writers start (their snapshots taken) and queue
// behind it, then it lets go. No timing: the test waits until the server reports each writer waiting on a
// lock.

function record(id: string, text: string): MessageRecord {
  const content = JSON.stringify({ id, role: "user", parts: [{ type: "text", text }] });
  return { id, parentId: null, role: "user", content, createdAt: new Date().toISOString(), text };
}

const ids = (records: readonly { id: string }[]) => records.map((entry) => entry.id);

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

/** A store on its own connection, with that connection's server process id. */
async function writer(sessionId: string): Promise<{ store: PostgresSessionStore; pid: number }> {
  const client = await schema.client();
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return { store: new PostgresSessionStore(client, sessionId), pid: rows[0]?.pid as number };
}

/** Holds the pointer rows of `sessions` in an open transaction until `release` commits it. */
async function holdPointers(
  sessions: readonly string[],
): Promise<{ holder: pg.Client; release(): Promise<void> }> {
  const holder = await schema.client();
  await holder.query("BEGIN");
  const { rowCount } = await holder.query(
    "SELECT 1 FROM assistant_leaves WHERE session_id = ANY($1::text[]) FOR UPDATE",
    [sessions],
  );
  expect(rowCount).toBe(sessions.length);
  return { holder, release: async () => void (await holder.query("COMMIT")) };
}

/** Resolves once every one of `pids` is waiting on a lock (asked of the server, never timed). */
async function waitingOnLocks(observer: pg.Client, pids: readonly number[]): Promise<void> {
  for (;;) {
    const { rows } = await observer.query<{ waiting: number }>(
      "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND wait_event_type = 'Lock'",
      [pids],
    );
    if (rows[0]?.waiting === pids.length) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("PostgresSessionStore append: atomic against writers on other connections", () => {
  it("an append under a parent another connection deletes while it waits stores nothing: parent-missing", async () => {
    const setup = await writer("s");
    await setup.store.append([record("p", "parent"), record("leaf", "leaf")], { parentId: undefined });
    const deleting = await writer("s");
    const appending = await writer("s");
    const { holder, release } = await holdPointers(["s"]);
    // The delete queues first; the append's snapshot, taken before the delete commits, still holds "p".
    const deleted = deleting.store.delete(["p"]);
    await waitingOnLocks(holder, [deleting.pid]);
    const appended = appending.store.append([record("child", "under p")], { parentId: "p" });
    await waitingOnLocks(holder, [deleting.pid, appending.pid]);
    await release();
    await deleted;
    expect(await appended).toEqual({ status: "parent-missing", parentId: "p" });
    expect(ids(await setup.store.readTree(10))).toEqual(["leaf"]);
  });

  it("two appends expecting the same leaf, both started before either commits: one is stored, one is stale", async () => {
    const setup = await writer("s");
    await setup.store.append([record("root", "start")], { parentId: undefined });
    const one = await writer("s");
    const two = await writer("s");
    const { holder, release } = await holdPointers(["s"]);
    const first = one.store.append([record("a", "from one")], {
      parentId: undefined,
      expectedLeafId: "root",
    });
    const second = two.store.append([record("b", "from two")], {
      parentId: undefined,
      expectedLeafId: "root",
    });
    await waitingOnLocks(holder, [one.pid, two.pid]);
    await release();
    const results = await Promise.all([first, second]);
    const stored = results.findIndex((result) => result.status === "appended");
    expect(results[1 - stored]).toEqual({ status: "stale-leaf", leafId: stored === 0 ? "a" : "b" });
    expect(ids(await setup.store.readPath(undefined, { limit: 10, content: false }))).toEqual([
      "root",
      stored === 0 ? "a" : "b",
    ]);
  });

  it("two appends under the latest leaf, both started before either commits, chain: no fork", async () => {
    const setup = await writer("s");
    await setup.store.append([record("root", "start")], { parentId: undefined });
    const one = await writer("s");
    const two = await writer("s");
    const { holder, release } = await holdPointers(["s"]);
    const first = one.store.append([record("a1", "one"), record("a2", "one again")], { parentId: undefined });
    const second = two.store.append([record("b1", "two"), record("b2", "two again")], {
      parentId: undefined,
    });
    await waitingOnLocks(holder, [one.pid, two.pid]);
    await release();
    const results = await Promise.all([first, second]);
    expect(results.map((result) => result.status)).toEqual(["appended", "appended"]);
    const path = ids(await setup.store.readPath(undefined, { limit: 10, content: false }));
    expect(path).toHaveLength(5);
    expect([path.slice(1, 3), path.slice(3)].sort()).toEqual([
      ["a1", "a2"],
      ["b1", "b2"],
    ]);
  });

  it("one id appended to two sessions, both started before either commits: one stores it, one meets its holder", async () => {
    const setup = await writer("one");
    await setup.store.append([record("start-one", "one")], { parentId: undefined });
    await new PostgresSessionStore(await schema.client(), "two").append([record("start-two", "two")], {
      parentId: undefined,
    });
    const one = await writer("one");
    const two = await writer("two");
    const { holder, release } = await holdPointers(["one", "two"]);
    const first = one.store.append([record("shared", "from one")], { parentId: undefined });
    const second = two.store.append([record("shared", "from two")], { parentId: undefined });
    await waitingOnLocks(holder, [one.pid, two.pid]);
    await release();
    const results = await Promise.all([first, second]);
    expect(results.map((result) => result.status).sort()).toEqual(["appended", "id-taken"]);
    const taken = results.find((result) => result.status === "id-taken");
    expect(taken?.status === "id-taken" && taken.holder.sessionId).toBe(
      results[0]?.status === "appended" ? "one" : "two",
    );
    const { rows } = await holder.query(
      "SELECT count(*)::int AS copies FROM assistant_messages WHERE id = 'shared'",
    );
    expect(rows[0]).toEqual({ copies: 1 });
  });
});
