// A randomized differential of agents' Postgres provider names: fast-check generates sequences of what user code
// does with `PostgresSessionProvider`, `PostgresContextProvider` and `PostgresSearchProvider`, run on agents@0.22.0's
// classes and on the entry's, each in a fresh schema of a throwaway PostgreSQL cluster (agents' tables created with
// agents' own DDL; the entry creates its own, or starts on agents' as after a switch), through a `pg.Client` or
// agents' `PostgresConnection`. Inputs stay where the README says both behave alike; each exclusion below names its
// row of "Differences from agents@0.22.0". On a failure fast-check prints the seed, the path and the shrunk sequence.
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
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageOfText } from "../message-of-text.js";
import { type MessageOperation, messageIds, messageOperations } from "../message-operations.js";
import { observe } from "../observed-value.js";

/** Runs and steps kept small enough for a loaded 2-core machine; raise them locally to hunt. */
const settings = { seed: 20261208, numRuns: 40 };
const maxSteps = 30;

let cluster: ThrowawayCluster;
beforeAll(async () => {
  cluster = await startThrowawayCluster();
}, 120_000);
afterAll(() => cluster?.stop());

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
/** How a run reaches Postgres, and whether the entry starts on tables agents created (a switch) or none. */
interface Setup {
  via: Via;
  entryTables: "agents'" | "none";
}

/** A fresh schema, its client and its drop: agents' tables for agents (it creates none), for the entry if asked. */
async function freshClient(implementation: Implementation, setup: Setup) {
  const schema = await createTestSchema(cluster.connectionString);
  const client = await schema.client();
  if (implementation === "agents" || setup.entryTables === "agents'")
    await client.query(AGENTS_POSTGRES_TABLES);
  return { client: setup.via === "pg.Client" ? client : connectionOver(client), drop: () => schema.drop() };
}

/** Runs `steps` on a provider `open` makes (again after each `"reopen"`); what each step observed. */
async function observedSteps<Provider>(
  open: () => Provider,
  steps: readonly (Step<Provider> | "reopen")[],
): Promise<unknown[]> {
  let provider = open();
  const ids = new Map<string, string>();
  const log: unknown[] = [];
  for (const step of steps) {
    if (step === "reopen") {
      // A new provider on the same tables: a request served by another process.
      provider = open();
      continue;
    }
    const [label, action] = step;
    try {
      log.push([label, observe(await action(provider), ids)]);
    } catch {
      log.push([label, "<throws>"]);
    }
  }
  return log;
}

type Step<Provider> = readonly [label: string, run: (provider: Provider) => unknown];

/** The steps whose observations differ: `[]` when the entry behaves as agents does. */
async function differences<Provider>(
  setup: Setup,
  open: (client: pg.Client | PostgresConnection, implementation: Implementation) => Provider,
  steps: readonly (Step<Provider> | "reopen")[],
): Promise<unknown[]> {
  // Each run's schemas are dropped at its end: hundreds of runs would hold more connections than Postgres allows.
  const agentsSchema = await freshClient("agents", setup);
  const entrySchema = await freshClient("entry", setup);
  const [agents, entry] = await Promise.all([
    observedSteps(() => open(agentsSchema.client, "agents"), steps),
    observedSteps(() => open(entrySchema.client, "entry"), steps),
  ]).finally(() => Promise.all([agentsSchema.drop(), entrySchema.drop()]));
  return agents.flatMap((observed, index) =>
    JSON.stringify(observed) === JSON.stringify(entry[index])
      ? []
      : [{ ...setup, agents: observed, entry: entry[index] }],
  );
}

const setup: fc.Arbitrary<Setup> = fc.record({
  via: fc.constantFrom<Via>("pg.Client", "PostgresConnection"),
  entryTables: fc.constantFrom<Setup["entryTables"]>("agents'", "none"),
});
/**
 * Ordinary text: words, unicode, quotes, placeholders' characters and line breaks. Letters with diacritics are
 * lower case: ours index them folded (the row of the search columns rebuilt without diacritics), agents' as
 * Postgres lowers them, which a cluster in the C locale does for ASCII only ("Ünï" is not found by "ünï").
 */
const words = [
  "the",
  "ferry",
  "leaves",
  "at",
  "nine",
  "café",
  "ünï",
  "🚀",
  "'q'",
  '"dq"',
  "?",
  "$1",
  "\n",
  "ferries",
  "running",
  "runs",
  "boxes",
  "don't",
  "e-mail",
  "3.14",
  "U.S.",
  "co-operate",
  "x_y",
  "and",
];
const text = fc.array(fc.constantFrom(...words), { maxLength: 6 }).map((chosen) => chosen.join(" "));
const queries = [
  "ferry",
  "nine",
  "leaves nine",
  "café",
  "ünï",
  "missing",
  "the",
  "run",
  "running",
  "box",
  "don't",
  "e-mail",
  "mail",
  "3.14",
  "U.S.",
  "us",
  "operate",
  "co-operate",
  "x_y",
  "x",
  "leave",
];

/** The item at a fraction of the list's length, undefined for an empty list. */
function pick<Item>(items: readonly Item[], fraction: number): Item | undefined {
  return items[Math.floor(fraction * items.length)];
}

// The session provider.

type AnySessionProvider = AgentsSessionProvider | PostgresSessionProvider;

type SessionOperation =
  | MessageOperation
  | { kind: "getLatestLeaf" | "getCompactions" | "clearMessages" | "reopen" }
  | { kind: "searchMessages"; query: string };

const messages = messageOperations(text);
const sessionOperation: fc.Arbitrary<SessionOperation> = fc.oneof(
  messages.append,
  messages.update,
  messages.delete,
  messages.history,
  messages.lookup,
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        "getLatestLeaf" as const,
        "getCompactions" as const,
        "clearMessages" as const,
        "reopen" as const,
      ),
    }),
  },
  messages.compaction,
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("searchMessages" as const),
      query: fc.constantFrom(...queries),
    }),
  },
);

/** `id` when it is a message of the session, else undefined (both agree on `getMessage`: compared elsewhere). */
async function stored(provider: AnySessionProvider, id: string): Promise<string | undefined> {
  return (await provider.getMessage(id)) === null ? undefined : id;
}

/** The ids of the pool that are messages of the session, in the pool's order. */
async function storedIds(provider: AnySessionProvider): Promise<string[]> {
  const found: string[] = [];
  // One at a time: a pg.Client runs one query at once.
  for (const id of messageIds) if ((await stored(provider, id)) !== undefined) found.push(id);
  return found;
}

function sessionStep(operation: SessionOperation): Step<AnySessionProvider> | "reopen" {
  const label = JSON.stringify(operation);
  switch (operation.kind) {
    case "append":
      return [
        label,
        async (p) => {
          const { id, parent } = operation;
          // An id deleted while messages below it were kept is refused here (its row): not reused.
          if ((await stored(p, id)) === undefined && (await p.getBranches(id)).length > 0) return "left out";
          const message = messageOfText(id, operation.role, operation.text);
          // An append's result is agents' `void`: only whether it threw is compared.
          if (parent === "latest") return void (await p.appendMessage(message));
          if (parent === "root") return void (await p.appendMessage(message, null));
          // A parent that is not a message of the session, or the message itself, is refused here (its row).
          const parentId = pick(await storedIds(p), parent);
          if (parentId === undefined || parentId === id) return "left out";
          return void (await p.appendMessage(message, parentId));
        },
      ];
    case "update":
      return [
        label,
        async (p) => {
          // A stored id: one that is not stored throws NOT_FOUND here (the updateMessage row).
          const id = pick(await storedIds(p), operation.position);
          return id === undefined
            ? "left out"
            : p.updateMessage(messageOfText(id, operation.role, operation.text));
        },
      ];
    case "delete":
      return [label, (p) => p.deleteMessages(operation.ids)];
    case "getHistory":
      return [label, (p) => p.getHistory(operation.leaf)];
    case "getPathLength":
      return [label, (p) => p.getPathLength(operation.leaf)];
    case "getMessage":
      return [label, (p) => p.getMessage(operation.id)];
    case "getBranches":
      return [label, (p) => p.getBranches(operation.id)];
    case "getLatestLeaf":
      return [label, (p) => p.getLatestLeaf()];
    case "getCompactions":
      return [label, (p) => p.getCompactions()];
    case "clearMessages":
      return [label, (p) => p.clearMessages()];
    case "reopen":
      return "reopen";
    case "addCompaction":
      return [
        label,
        async (p) => {
          // A range over messages of the session: an unknown id is refused here (the addCompaction row).
          const ids = operation.onPath
            ? (await p.getHistory())
                .map((message) => message.id)
                .filter((id) => !id.startsWith("compaction_"))
            : await storedIds(p);
          const [from, to] = [pick(ids, operation.from), pick(ids, operation.to)];
          if (from === undefined || to === undefined) return "left out";
          return p.addCompaction(operation.summary, from, to);
        },
      ];
    case "searchMessages":
      return [
        label,
        async (p) => {
          // agents finds the messages holding every word, ours ranks any (the search row): the messages each
          // word finds alone, kept where all agree, are agents' set; of ours, the text matches. Hits' role and
          // createdAt are their own row: ids only.
          const found: string[][] = [];
          for (const word of operation.query.split(" ")) {
            const hits = (await p.searchMessages?.(word, 1000)) ?? [];
            found.push(
              hits.filter((hit) => !("matchedBy" in hit) || hit.matchedBy === "text").map((hit) => hit.id),
            );
          }
          const [first = [], ...others] = found;
          return first.filter((id) => others.every((ids) => ids.includes(id))).sort();
        },
      ];
  }
}

/** Two sessions on the same tables: most steps on `a`, some on `b`. */
type TwoSessions = Record<"a" | "b", AnySessionProvider>;
const sessionName = fc.oneof({ weight: 3, arbitrary: fc.constant("a" as const) }, fc.constant("b" as const));

function twoSessionStep(on: "a" | "b", operation: SessionOperation): Step<TwoSessions> | "reopen" {
  const step = sessionStep(operation);
  if (step === "reopen") return step;
  const [label, action] = step;
  return [
    `${on}: ${label}`,
    async (sessions) => {
      const other = sessions[on === "a" ? "b" : "a"];
      // An id the other session holds is refused here (the row of message ids unique in the database).
      if (operation.kind === "append" && (await stored(other, operation.id)) !== undefined) return "left out";
      return action(sessions[on]);
    },
  ];
}

const openSessions = (
  client: pg.Client | PostgresConnection,
  implementation: Implementation,
): TwoSessions => {
  const open = (sessionId: string) =>
    implementation === "agents"
      ? new AgentsSessionProvider(client as never, sessionId)
      : new PostgresSessionProvider(client, sessionId);
  return { a: open("random ? $1"), b: open("b") };
};

// The context provider.

type AnyContextProvider = AgentsContextProvider | PostgresContextProvider;
type ContextOperation =
  | { kind: "get"; label: string }
  | { kind: "set"; label: string; content: string }
  | { kind: "reopen" };

const contextLabel = fc.constantFrom("memory", "memory_chat-1", "l ? $1 ünï");
const contextOperation: fc.Arbitrary<ContextOperation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("get" as const), label: contextLabel }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("set" as const), label: contextLabel, content: text }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reopen" as const) }) },
);

/** The providers of every label, on one client (as several blocks of one agent). */
type ContextProviders = (label: string) => AnyContextProvider;

function contextStep(operation: ContextOperation): Step<ContextProviders> | "reopen" {
  const label = JSON.stringify(operation);
  switch (operation.kind) {
    case "get":
      return [label, (providers) => providers(operation.label).get()];
    case "set":
      return [label, (providers) => providers(operation.label).set(operation.content)];
    case "reopen":
      return "reopen";
  }
}

const openContext = (
  client: pg.Client | PostgresConnection,
  implementation: Implementation,
): ContextProviders => {
  const made = new Map<string, AnyContextProvider>();
  return (label) => {
    const provider =
      made.get(label) ??
      (implementation === "agents"
        ? new AgentsContextProvider(client as never, label)
        : new PostgresContextProvider(client, label));
    made.set(label, provider);
    return provider;
  };
};

// The search provider.

type AnySearchProvider = AgentsSearchProvider | PostgresSearchProvider;
type SearchOperation =
  | { kind: "set"; key: string; content: string }
  | { kind: "get" | "reopen" }
  | { kind: "search"; query: string };

const searchOperation: fc.Arbitrary<SearchOperation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("set" as const),
      // Keys hold none of the queries' words: the entry also finds an entry by its key (the search providers' row).
      key: fc.constantFrom("harbour", "k ? $9", "ğ 🚀", "tides", "'q'"),
      content: text,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom("get" as const, "reopen" as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("search" as const),
      query: fc.constantFrom(...queries, "", "  ", "? $1", "!(&|:*"),
    }),
  },
);

function searchStep(operation: SearchOperation): Step<AnySearchProvider> | "reopen" {
  const label = JSON.stringify(operation);
  switch (operation.kind) {
    case "set":
      return [label, (p) => p.set(operation.key, operation.content)];
    case "get":
      return [label, (p) => p.get()];
    case "reopen":
      return "reopen";
    case "search":
      return [
        label,
        async (p) => {
          // agents' finds the entries holding every word, the entry's those holding any (the search providers'
          // row): the entries each word finds alone, kept where all agree. At most five entries, never over ten.
          const found: (string | null)[][] = [];
          for (const word of operation.query.split(" ")) {
            const answer = await p.search(word);
            // Entries are separated by a blank line before the next `[key]` (content may end with a line break).
            found.push(answer === null ? [null] : answer.split(/\n\n(?=\[)/));
          }
          const [first = [], ...others] = found;
          return first.filter((entry) => others.every((entries) => entries.includes(entry))).sort();
        },
      ];
  }
}

const openSearch = (client: pg.Client | PostgresConnection, implementation: Implementation) => {
  const provider =
    implementation === "agents"
      ? new AgentsSearchProvider(client as never)
      : new PostgresSearchProvider(client);
  provider.init("notes ? $1");
  return provider;
};

// Every run makes two schemas; a failure's shrinking makes many more: the limits are generous.
const patient = 600_000;

describe("the entry's Postgres providers against agents@0.22.0's, on generated sequences", () => {
  it(
    "session provider: two sessions' appends, branches, updates, deletes, overlays and search observe the same after every step",
    async () => {
      const end: SessionOperation[] = [
        { kind: "getHistory", leaf: undefined },
        { kind: "getCompactions" },
        { kind: "reopen" },
        { kind: "getLatestLeaf" },
      ];
      const property = fc.asyncProperty(
        setup,
        fc.array(fc.tuple(sessionName, sessionOperation), { minLength: 1, maxLength: maxSteps }),
        async (reached, operations) => {
          const steps = [
            ...operations.map(([on, operation]) => twoSessionStep(on, operation)),
            ...end.flatMap((operation) => [twoSessionStep("a", operation), twoSessionStep("b", operation)]),
          ];
          expect(await differences(reached, openSessions, steps)).toEqual([]);
        },
      );
      await fc.assert(property, settings);
    },
    patient,
  );

  it(
    "context provider: gets and sets of several labels observe the same after every step",
    async () => {
      const property = fc.asyncProperty(
        setup,
        fc.array(contextOperation, { minLength: 1, maxLength: maxSteps }),
        async (reached, operations) => {
          expect(await differences(reached, openContext, operations.map(contextStep))).toEqual([]);
        },
      );
      await fc.assert(property, { ...settings, seed: settings.seed + 1 });
    },
    patient,
  );

  it(
    "search provider: sets, counts and searches observe the same after every step",
    async () => {
      const property = fc.asyncProperty(
        setup,
        fc.array(searchOperation, { minLength: 1, maxLength: maxSteps }),
        async (reached, operations) => {
          expect(await differences(reached, openSearch, operations.map(searchStep))).toEqual([]);
        },
      );
      await fc.assert(property, { ...settings, seed: settings.seed + 2 });
    },
    patient,
  );
});
