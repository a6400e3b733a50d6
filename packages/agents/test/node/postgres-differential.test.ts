// Differential tests of agents' Postgres provider names: the same operations run against agents@0.22.0's
// `PostgresSessionProvider`, `PostgresContextProvider`, `PostgresSearchProvider` and this entry's, each in a
// fresh schema of a throwaway PostgreSQL cluster (agents' tables created with agents' own DDL, from its docs;
// ours create their own), through a `pg.Client` and through agents' `PostgresConnection`. What the README lists
// as a difference is left out or normalised: error wording (a throw is compared as a throw), random overlay
// ids and times, token figures, search finding more.
import {
  type PostgresConnection,
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
} from "@contextblocks/agents/experimental/memory/session";
import {
  AGENTS_POSTGRES_TABLES,
  createTestSchema,
  startThrowawayCluster,
  type ThrowawayCluster,
} from "@contextblocks/test-kit/postgres";
import {
  PostgresContextProvider as AgentsContextProvider,
  PostgresSearchProvider as AgentsSearchProvider,
  PostgresSessionProvider as AgentsSessionProvider,
} from "agents-session/experimental/memory/session";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { observe } from "../observed-value.js";
import { toolPartsMessage } from "../tool-parts-message.js";
import { unknownIdSteps } from "../unknown-id-steps.js";

let cluster: ThrowawayCluster;
const dropped: (() => Promise<void>)[] = [];
beforeAll(async () => {
  cluster = await startThrowawayCluster();
}, 120_000);
afterAll(async () => {
  for (const drop of dropped) await drop();
  cluster?.stop();
});

/** A `PostgresConnection` as agents' users write one: `?` placeholders over a `pg.Client`. */
function connectionOver(target: pg.Client): PostgresConnection {
  return {
    async execute(query, args = []) {
      let index = 0;
      const result = await target.query(
        query.replace(/\?/g, () => `$${++index}`),
        args,
      );
      return { rows: result.rows };
    },
  };
}

type Via = "pg.Client" | "PostgresConnection";
type Implementation = "agents" | "entry";

/** A fresh schema: agents' tables for agents (it creates none), nothing for the entry. */
async function freshClient(implementation: Implementation, via: Via) {
  const schema = await createTestSchema(cluster.connectionString);
  dropped.push(() => schema.drop());
  const client = await schema.client();
  if (implementation === "agents") await client.query(AGENTS_POSTGRES_TABLES);
  return via === "pg.Client" ? client : connectionOver(client);
}

type AnyProvider = AgentsSessionProvider | PostgresSessionProvider;
type Step = readonly [label: string, run: (provider: AnyProvider) => unknown];

async function run(implementation: Implementation, via: Via, sessionId: string, steps: readonly Step[]) {
  const client = await freshClient(implementation, via);
  const provider =
    implementation === "agents"
      ? new AgentsSessionProvider(client as never, sessionId)
      : new PostgresSessionProvider(client, sessionId);
  const ids = new Map<string, string>();
  const log: unknown[] = [];
  for (const [label, action] of steps) {
    try {
      log.push([label, observe(await action(provider), ids)]);
    } catch (error) {
      log.push([label, `<throws>`, String(error).slice(0, 200)]);
    }
  }
  return log;
}

async function differences(sessionId: string, steps: readonly Step[]): Promise<unknown[]> {
  const found: unknown[] = [];
  for (const via of ["pg.Client", "PostgresConnection"] as const) {
    const agents = await run("agents", via, sessionId, steps);
    const entry = await run("entry", via, sessionId, steps);
    agents.forEach((observed, index) => {
      const ours = entry[index] as unknown[];
      const theirs = observed as unknown[];
      if (JSON.stringify(theirs.slice(0, 2)) !== JSON.stringify(ours.slice(0, 2))) {
        found.push({ via, agents: theirs, entry: ours });
      }
    });
  }
  return found;
}

const say = (id: string, role: string, text: string, extra: Record<string, unknown> = {}) =>
  ({ id, role, parts: [{ type: "text", text }], ...extra }) as never;

/** An append's result is agents' `void`: only whether it threw is compared. */
const append =
  (message: unknown, parentId?: string | null): Step[1] =>
  async (provider) => {
    await (parentId === undefined
      ? provider.appendMessage(message as never)
      : provider.appendMessage(message as never, parentId));
    return null;
  };

const reads: Step[] = [
  ["getHistory", (p) => p.getHistory()],
  ["getLatestLeaf", (p) => p.getLatestLeaf()],
  ["getPathLength", (p) => p.getPathLength()],
];

describe("the entry's Postgres providers against agents@0.22.0's", () => {
  it("session provider: odd ids and text, appended again, updated, deleted, searched", async () => {
    const odd: { id: string; role: string; parts: unknown[] }[] = [
      say(`it's "quoted"`, "user", `quote 'me' "now" ? $1 $2 ?`),
      say("? $1", "assistant", "placeholders ? and $1 inside"),
      say("ünï cødé 🚀", "assistant", "unicode ✓ 🚀 café"),
      say(" spaced id ", "user", ""),
      toolPartsMessage,
      say("meta", "user", "with metadata", {
        metadata: { a: null, b: [1, { c: "d" }] },
        createdAt: "2020-01-01",
      }),
      { id: "no-parts", role: "system", parts: [] },
    ];
    const steps: Step[] = [
      ...odd.map((message): Step => [`append ${message.id}`, append(message)]),
      ...reads,
      ...odd.map((message): Step => [`getMessage ${message.id}`, (p) => p.getMessage(message.id)]),
      ["append a stored id, other content", append(say("meta", "user", "changed"))],
      ["append a stored id, other parent", append(say("tool-1", "user", "again"), "meta")],
      ["append a stored id, as a root", append(say(" spaced id ", "user", ""), null)],
      ["getMessage meta", (p) => p.getMessage("meta")],
      ...reads,
      ...unknownIdSteps<AnyProvider>(`it's "quoted"`),
      ["update", (p) => p.updateMessage(say("meta", "assistant", "updated ? $1", { metadata: { z: 1 } }))],
      ["getMessage updated", (p) => p.getMessage("meta")],
      ...reads,
      ["search a word", async (p) => (await p.searchMessages?.("placeholders", 20))?.map((hit) => hit.id)],
      ["search quotes", async (p) => (await p.searchMessages?.(`'me' "now"`, 20))?.map((hit) => hit.id)],
      ["search ? $1", async (p) => (await p.searchMessages?.("? $1", 20))?.map((hit) => hit.id)],
      ["search reasoning", async (p) => (await p.searchMessages?.("hmm", 20))?.map((hit) => hit.id)],
      ["search a tool's input", async (p) => (await p.searchMessages?.("Oslo", 20))?.map((hit) => hit.id)],
      ["search a tool's name", async (p) => (await p.searchMessages?.("weather", 20))?.map((hit) => hit.id)],
      ["search a part type", async (p) => (await p.searchMessages?.("text", 20))?.map((hit) => hit.id)],
      ["search empty", async (p) => (await p.searchMessages?.("", 20))?.map((hit) => hit.id)],
      ["search operators", async (p) => (await p.searchMessages?.("!(&|:*", 20))?.map((hit) => hit.id)],
      [
        "search hit shape",
        async (p) => {
          const hit = (await p.searchMessages?.("updated", 20))?.[0];
          return hit && { id: hit.id, content: hit.content };
        },
      ],
    ];
    expect(await differences("odd ? $1", steps)).toEqual([]);
  });

  it("a tree: branches, explicit roots, deletes inside the path and of the leaf, clear", async () => {
    const steps: Step[] = [
      ...["m1", "m2", "m3", "m4"].map(
        (id, index): Step => [`append ${id}`, append(say(id, index % 2 ? "assistant" : "user", id))],
      ),
      ["append a branch", append(say("m3b", "user", "three b"), "m2")],
      ...reads,
      ["getBranches m2", (p) => p.getBranches("m2")],
      ["getHistory m4", (p) => p.getHistory("m4")],
      ["getPathLength m4", (p) => p.getPathLength("m4")],
      ["getHistory of an inner message", (p) => p.getHistory("m2")],
      ["append a root", append(say("root2", "user", "root two"), null)],
      ...reads,
      ["append under the root", append(say("after", "assistant", "after"))],
      ["delete inside a path", (p) => p.deleteMessages(["m3"])],
      ["getHistory m4 after", (p) => p.getHistory("m4")],
      ["getPathLength m4 after", (p) => p.getPathLength("m4")],
      ["getBranches m2 after", (p) => p.getBranches("m2")],
      ["delete the leaf", (p) => p.deleteMessages(["after"])],
      ...reads,
      ["append after the delete", append(say("next", "user", "next"))],
      ...reads,
      ["clear", (p) => p.clearMessages()],
      ...reads,
      ["append an id used before the clear", append(say("m1", "user", "one again"))],
      ...reads,
    ];
    expect(await differences("tree", steps)).toEqual([]);
  });

  it("compaction overlays: nested, overlapping, one message, deleted and cleared", async () => {
    const steps: Step[] = [
      ...["m1", "m2", "m3", "m4", "m5", "m6"].map(
        (id, index): Step => [`append ${id}`, append(say(id, index % 2 ? "assistant" : "user", id))],
      ),
      ["add m1-m2", (p) => p.addCompaction("summary 'one' ? $1", "m1", "m2")],
      ["getCompactions", (p) => p.getCompactions()],
      ...reads,
      ["add m1-m3", (p) => p.addCompaction("summary two", "m1", "m3")],
      ["add m2-m4 (overlapping)", (p) => p.addCompaction("two-four", "m2", "m4")],
      ["add one message", (p) => p.addCompaction("", "m5", "m5")],
      ["getCompactions again", (p) => p.getCompactions()],
      ...reads,
      ["getHistory m3", (p) => p.getHistory("m3")],
      ["delete m2", (p) => p.deleteMessages(["m2"])],
      ["update m6", (p) => p.updateMessage(say("m6", "assistant", "changed six"))],
      ...reads,
      ["clear", (p) => p.clearMessages()],
      ["getCompactions after clear", (p) => p.getCompactions()],
    ];
    expect(await differences("compaction", steps)).toEqual([]);
  });

  it("the same id appended twice at once keeps the first, as agents'", async () => {
    const steps: Step[] = [
      ["append m0", append(say("m0", "user", "zero"))],
      [
        "the same id twice at once",
        async (p) => {
          await Promise.all([
            p.appendMessage(say("x", "user", "one")),
            p.appendMessage(say("x", "user", "two")),
          ]);
          return p.getMessage("x");
        },
      ],
      ...reads,
    ];
    expect(await differences("same id at once", steps)).toEqual([]);
  });

  it("DIVERGENCE: appends at once on one client make a chain (agents' read the same leaf and make siblings)", async () => {
    const appendAtOnce = async (provider: AnyProvider) => {
      await provider.appendMessage(say("m0", "user", "zero"));
      await Promise.all(["a", "b", "c"].map((id) => provider.appendMessage(say(id, "user", id))));
      return (await provider.getHistory()).map((message) => message.id);
    };
    for (const via of ["pg.Client", "PostgresConnection"] as const) {
      const agents = new AgentsSessionProvider((await freshClient("agents", via)) as never, "at once");
      expect(await appendAtOnce(agents)).toEqual(["m0", "c"]);
      const entry = new PostgresSessionProvider(await freshClient("entry", via), "at once");
      expect(await appendAtOnce(entry)).toEqual(["m0", "a", "b", "c"]);
    }
  });
});

type AnySearch = AgentsSearchProvider | PostgresSearchProvider;
type AnyContext = AgentsContextProvider | PostgresContextProvider;

async function observed<T>(steps: readonly (readonly [string, (target: T) => unknown])[], target: T) {
  const log: unknown[] = [];
  for (const [label, action] of steps) {
    try {
      log.push([label, await action(target)]);
    } catch {
      log.push([label, "<throws>"]);
    }
  }
  return log;
}

describe("the entry's search and context providers against agents@0.22.0's", () => {
  it("search: set, replace, get, and what search answers for ordinary and hostile queries", async () => {
    const queries = ["ferry", "harbour master", "", "   ", "?", "$1", "'", `"`, "!(&|:*", "the", "zzz", "OR"];
    const steps: (readonly [string, (provider: AnySearch) => unknown])[] = [
      ["get, empty", (p) => p.get()],
      ["search, empty", (p) => p.search("ferry")],
      ["set", (p) => p.set("harbour", "the harbour master keeps the ferry timetable")],
      ["set odd", (p) => p.set("k ? $1", `quotes 'q' "dq" ? $1 ünï 🚀`)],
      ["set empty content", (p) => p.set("empty", "")],
      ["get", (p) => p.get()],
      ...queries.map(
        (query) => [`search ${JSON.stringify(query)}`, (p: AnySearch) => p.search(query)] as const,
      ),
      ["replace", (p) => p.set("harbour", "replaced timetable")],
      ["search the replacement", (p) => p.search("timetable")],
      ["search the replaced", (p) => p.search("master")],
      ["get after replace", (p) => p.get()],
    ];
    for (const via of ["pg.Client", "PostgresConnection"] as const) {
      const agents = new AgentsSearchProvider((await freshClient("agents", via)) as never);
      agents.init("notes");
      const entry = new PostgresSearchProvider(await freshClient("entry", via));
      entry.init("notes");
      expect(await observed(steps, entry)).toEqual(await observed(steps, agents));
    }
  });

  it("search: at most ten entries, as agents'", async () => {
    const entriesFound = async (provider: AnySearch) => {
      provider.init("many");
      for (let index = 0; index < 12; index++) await provider.set(`ferry-${index}`, `ferry note ${index}`);
      return ((await provider.search("ferry note")) ?? "").split("\n\n").length;
    };
    const agents = new AgentsSearchProvider((await freshClient("agents", "pg.Client")) as never);
    const entry = new PostgresSearchProvider(await freshClient("entry", "pg.Client"));
    expect(await entriesFound(agents)).toBe(10);
    expect(await entriesFound(entry)).toBe(10);
  });

  it("context: get, set, replace, odd text and labels", async () => {
    const steps: (readonly [string, (provider: AnyContext) => unknown])[] = [
      ["get, empty", (p) => p.get()],
      ["set", (p) => p.set(`q 'x' "y" ? $1 ünï 🚀`)],
      ["get", (p) => p.get()],
      ["set empty", (p) => p.set("")],
      ["get empty", (p) => p.get()],
    ];
    for (const via of ["pg.Client", "PostgresConnection"] as const) {
      for (const label of ["memory", "memory_chat-1", "l ? $1"]) {
        const agents = new AgentsContextProvider((await freshClient("agents", via)) as never, label);
        const entry = new PostgresContextProvider(await freshClient("entry", via), label);
        expect(await observed(steps, entry)).toEqual(await observed(steps, agents));
      }
    }
  });
});

describe("agents@0.22.0's providers and the entry's on the same tables", () => {
  const ids = (messages: readonly { id: string }[]) => messages.map((message) => message.id);
  /** What both read of the session: path, latest leaf, its length, branches of m1 and the overlays. */
  const view = async (provider: AnyProvider) => ({
    history: ids(await provider.getHistory()),
    leaf: (await provider.getLatestLeaf())?.id ?? null,
    length: await provider.getPathLength(),
    branches: ids(await provider.getBranches("m1")),
    overlays: (await provider.getCompactions()).map(({ summary, fromMessageId, toMessageId }) => ({
      summary,
      fromMessageId,
      toMessageId,
    })),
    m2: await provider.getMessage("m2"),
  });

  it("each reads what the other wrote, turn by turn, through a pg.Client and a PostgresConnection", async () => {
    for (const via of ["pg.Client", "PostgresConnection"] as const) {
      const client = await freshClient("agents", via);
      const agents = new AgentsSessionProvider(client as never, "shared");
      const entry = new PostgresSessionProvider(client, "shared");
      const same = async () => expect(await view(entry)).toEqual(await view(agents));

      for (const id of ["m1", "m2", "m3"]) await agents.appendMessage(say(id, "user", `${id} 'q' ? $1`));
      await agents.appendMessage(say("m2b", "assistant", "a branch"), "m1");
      await agents.addCompaction("summary", "m1", "m2b");
      await same();
      await entry.appendMessage(say("m4", "assistant", "four"));
      await same();
      await agents.appendMessage(say("m5", "user", "five"));
      await same();
      await entry.appendMessage(say("m6", "assistant", "six"), "m5");
      await entry.updateMessage(say("m2", "assistant", "two, updated by the entry"));
      await same();
      await agents.updateMessage(say("m2", "user", "two, updated by agents"));
      await agents.deleteMessages(["m6"]);
      await same();
      await entry.addCompaction("later", "m4", "m5");
      await same();
      await entry.deleteMessages(["m5"]);
      await same();
      await agents.clearMessages();
      await same();
      await entry.appendMessage(say("m1", "user", "again"));
      await same();
    }
  });

  it("DIVERGENCE: agents' append of a new root or under an earlier message, after the entry's appends, is not the entry's latest leaf", async () => {
    // The entry keeps the latest leaf in `assistant_leaves`, which agents' provider does not move: while the
    // entry's leaf is still childless, a message agents put elsewhere is not taken for the latest one.
    const client = await freshClient("agents", "pg.Client");
    const agents = new AgentsSessionProvider(client as never, "pointer");
    const entry = new PostgresSessionProvider(client, "pointer");
    await entry.appendMessage(say("m1", "user", "one"));
    await entry.appendMessage(say("m2", "assistant", "two"));
    await agents.appendMessage(say("root", "user", "a new root"), null);
    expect((await agents.getLatestLeaf())?.id).toBe("root");
    expect((await entry.getLatestLeaf())?.id).toBe("m2");
    // agents' next append without a parent goes under its own leaf; the entry's leaf stays where it was.
    await agents.appendMessage(say("m3", "user", "three"));
    expect(ids(await agents.getHistory())).toEqual(["root", "m3"]);
    expect(ids(await entry.getHistory())).toEqual(["m1", "m2"]);
    // Read by its id, each path is the same in both.
    expect(ids(await entry.getHistory("m3"))).toEqual(["root", "m3"]);
  });
});
