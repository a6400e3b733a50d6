import { isContextError } from "@contextblocks/core";
import { type SessionBackend, SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";

/**
 * Property tests of what a chat client (the AI SDK's `useChat`) can send: any part type, any metadata,
 * hostile ids and roles, duplicate ids, parts that are not arrays, messages over a Durable Object's 2 MB
 * row. Against the real backends: every message is either stored and read back as its JSON, or refused
 * with a `ContextError` naming the problem, and a refusal changes nothing already stored.
 */

/** The tables as agents@0.22.0 created them: the store keeps the indexed layout on them. */
const agentsTables = `CREATE TABLE assistant_messages (id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id);
CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id);`;

interface BackendUnderTest {
  name: string;
  open(): SessionBackend;
  /** What the documented duplicate rule gives for the same message appended again where it is stored. */
  identicalRetry: "refused" | "stored once";
}

const backends: BackendUnderTest[] = [
  // Every backend is read through the same message tree, which stores an identical retry once.
  { name: "memory", open: () => inMemoryBackend(), identicalRetry: "stored once" },
  ...(["lean", "keyed"] as const).map(
    (layout): BackendUnderTest => ({
      name: `sqlite (${layout})`,
      open: () => sqliteBackend(new Database(":memory:"), { newDatabaseLayout: layout }),
      identicalRetry: "stored once",
    }),
  ),
  {
    name: "sqlite (indexed)",
    open: () => {
      const database = new Database(":memory:");
      database.exec(agentsTables);
      return sqliteBackend(database);
    },
    identicalRetry: "stored once",
  },
];

const sessionIds = ["one", "two"] as const;

// ── What a client can send ─────────────────────────────────────────────────────────────────────────────

const hostileText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "",
    "\u0000",
    "nul\u0000inside",
    "\ud800",
    "a\udc00b",
    "🚀",
    "__proto__",
    "constructor",
    "x".repeat(1_024),
    "x".repeat(1_025),
  ),
);

const json = fc.jsonValue({ maxDepth: 3 });

const toolStates = [
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied",
] as const;

const part = fc.oneof(
  fc.record(
    { type: fc.constant("text"), text: hostileText, state: fc.constantFrom("streaming", "done") },
    { requiredKeys: ["type", "text"] },
  ),
  fc.record({ type: fc.constant("reasoning"), text: hostileText, providerMetadata: json }),
  fc.record(
    {
      type: fc.constantFrom("tool-search", "tool-", "dynamic-tool"),
      toolCallId: hostileText,
      toolName: hostileText,
      state: fc.constantFrom(...toolStates),
      input: json,
      output: json,
      errorText: hostileText,
    },
    { requiredKeys: ["type", "toolCallId", "state"] },
  ),
  fc.record({
    type: fc.constantFrom("data-weather", "data-run-message", "data-"),
    id: hostileText,
    data: json,
  }),
  fc.record({
    type: fc.constant("file"),
    mediaType: fc.constantFrom("image/png", "application/pdf", ""),
    url: fc.integer({ min: 0, max: 20_000 }).map((size) => `data:image/png;base64,${"A".repeat(size)}`),
  }),
  fc.record({ type: fc.constantFrom("source-url", "step-start", "x-provider-part"), url: hostileText }),
  fc.dictionary(hostileText, fc.anything({ maxDepth: 2 })).map((fields) => ({ ...fields, type: "unknown" })),
  // Not parts: refused, with the index of the part.
  fc.constantFrom<unknown>(null, 1, "text", [], { text: "no type" }, { type: 5 }),
);

const parts = fc.oneof(
  { weight: 6, arbitrary: fc.array(part, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.sparseArray(part, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, "parts", { 0: { type: "text" } }, 3) },
);

/** A cycle: JSON cannot hold it. */
function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: "loop" };
  value.self = value;
  return value;
}

const metadata = fc.oneof(
  json,
  fc.anything({
    maxDepth: 3,
    withBigInt: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withBoxedValues: true,
    withTypedArray: true,
  }),
  fc.constantFrom<unknown>(
    { compaction: { fromMessageId: "a", toMessageId: "b" }, kept: 1 },
    JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'),
    { numbers: [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e308] },
    { when: new Date(0), never: new Date(Number.NaN), missing: undefined },
    { nested: { compaction: "stays: only the top-level key is the server's" } },
  ),
  fc.constant(undefined).map(cyclic),
);

const messageId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("a", "b", "c", "d", "e") },
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 7, ["a"]) },
);

const role = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("user", "assistant") },
  { weight: 1, arbitrary: fc.constantFrom("system", "tool", "", "User") },
  { weight: 1, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 1) },
);

const clientMessage: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record(
      {
        id: messageId,
        role,
        parts,
        metadata,
        createdAt: fc.oneof(fc.date({ noInvalidDate: false }), hostileText, fc.integer()),
      },
      { requiredKeys: ["id", "role", "parts"] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "hello", 42, [], [{ id: "a" }]) },
);

/** One append as an application makes it: to the store, through a `Session`, or as a client's message. */
const append = fc.record({
  session: fc.constantFrom(0, 1),
  via: fc.constantFrom("store", "session", "client"),
  message: clientMessage,
});

type Append = { session: number; via: "store" | "session" | "client"; message: unknown };

// ── The contract, written out ─────────────────────────────────────────────────────────────────────────

interface Stored {
  session: number;
  json: string;
}

/** A lone UTF-16 surrogate (what UTF-8 storage cannot keep), by the definition of well-formed strings. */
function hasLoneSurrogate(text: string): boolean {
  return !(text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The message as the client path stores it: server-only parts, its `createdAt` (the store's word) and the
 * `compaction` metadata key dropped.
 */
function asClientWrote(message: Record<string, unknown>): Record<string, unknown> {
  const cleaned: Record<string, unknown> = {
    ...message,
    parts: (message.parts as { type: string }[]).filter((entry) => entry.type !== "data-run-message"),
  };
  delete cleaned.createdAt;
  const data = message.metadata;
  if (typeof data === "object" && data !== null && !Array.isArray(data) && "compaction" in data) {
    const { compaction: _dropped, ...rest } = data as Record<string, unknown>;
    cleaned.metadata = rest;
  }
  return cleaned;
}

type Outcome = { refused: RegExp } | { stored: string } | { storedAlready: true };

/** What the documentation promises for this append, given what is stored. */
function expectedOutcome(
  write: Append,
  stored: ReadonlyMap<string, Stored>,
  backend: BackendUnderTest,
): Outcome {
  const value = write.message;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { refused: /appendMessage: not a SessionMessage/ };
  }
  const message = value as Record<string, unknown>;
  const { id } = message;
  if (typeof id !== "string" || id.length === 0)
    return { refused: /appendMessage: not a SessionMessage: id must be a non-empty string/ };
  if (id.length > 1_024)
    return { refused: /appendMessage: not a SessionMessage: id is \d+ characters long; the limit is 1024/ };
  if (hasLoneSurrogate(id))
    return { refused: /appendMessage: not a SessionMessage: id has a lone UTF-16 surrogate/ };
  if (typeof message.role !== "string" || message.role.length === 0) {
    return {
      refused: /appendMessage: not a SessionMessage: role of message ".*" must be a non-empty string/s,
    };
  }
  if (message.role.length > 1_024)
    return {
      refused:
        /appendMessage: not a SessionMessage: role of message ".*" is \d+ characters long; the limit is 1024/s,
    };
  if (hasLoneSurrogate(message.role))
    return {
      refused: /appendMessage: not a SessionMessage: role of message ".*" has a lone UTF-16 surrogate/s,
    };
  if (!Array.isArray(message.parts))
    return { refused: /appendMessage: not a SessionMessage: parts of message ".*" must be an array/s };
  for (let index = 0; index < message.parts.length; index++) {
    const entry = message.parts[index] as { type?: unknown } | null | undefined;
    if (typeof entry !== "object" || entry === null || typeof entry.type !== "string") {
      return {
        refused: new RegExp(
          `appendMessage: not a SessionMessage: part ${index} of message ".*" must be an object with a string type`,
          "s",
        ),
      };
    }
  }
  if (write.via === "client" && message.role !== "user" && message.role !== "assistant") {
    return { refused: /appendMessage: a client-written message must have role "user" or "assistant"/ };
  }
  const accepted = write.via === "client" ? asClientWrote(message) : message;
  let text: string;
  try {
    text = JSON.stringify(accepted);
  } catch {
    return { refused: /message ".*" cannot be stored as JSON/s };
  }
  const existing = stored.get(id);
  if (existing !== undefined) {
    if (
      backend.identicalRetry === "stored once" &&
      existing.session === write.session &&
      existing.json === text
    ) {
      return { storedAlready: true };
    }
    return { refused: /appendMessage: a message with id ".*" already exists in (this|another) session/s };
  }
  return { stored: text };
}

/** Every session's history and tree, as text (what a refused append must leave as it was). */
async function snapshot(backend: SessionBackend): Promise<string> {
  const views: unknown[] = [];
  for (const sessionId of sessionIds) {
    const store = backend.messages(sessionId);
    const tree = (await store.getTree()).map(({ id, parentId, role }) => ({ id, parentId, role }));
    views.push(await store.getHistory(), tree);
  }
  return JSON.stringify(views);
}

function run(backend: SessionBackend, write: Append): Promise<unknown> {
  const sessionId = sessionIds[write.session] as string;
  const message = write.message as SessionMessage;
  if (write.via === "store") return backend.messages(sessionId).appendMessage(message);
  const session = new SessionBuilder(backend).forSession(sessionId).build();
  return session.appendMessage(message, undefined, write.via === "client" ? { source: "client" } : {});
}

async function outcomeOf(promise: Promise<unknown>): Promise<{ error: unknown } | { value: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

function expectRefusal(result: { error: unknown } | { value: unknown }, reason: RegExp, label: string): void {
  expect("error" in result, `${label}: expected a refusal matching ${reason}`).toBe(true);
  const error = (result as { error: unknown }).error;
  expect(isContextError(error), `${label}: not a ContextError: ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe("INVALID_INPUT");
  expect((error as Error).message).toMatch(reason);
}

for (const backendUnderTest of backends) {
  describe(`client-written messages on ${backendUnderTest.name}`, () => {
    it("each append is stored exactly (its JSON) or refused with a ContextError naming why, and a refusal or its retry changes nothing", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(append, { minLength: 1, maxLength: 8 }), async (writes) => {
          const backend = backendUnderTest.open();
          const stored = new Map<string, Stored>();
          const paths: string[][] = [[], []];
          const leaves: (string | null)[] = [null, null];
          for (const write of writes as Append[]) {
            const expected = expectedOutcome(write, stored, backendUnderTest);
            const before = await snapshot(backend);
            const result = await outcomeOf(run(backend, write));
            if ("refused" in expected) {
              expectRefusal(result, expected.refused, "first try");
              expect(await snapshot(backend)).toBe(before);
              // The same append again: the same refusal, and still nothing changed.
              expectRefusal(await outcomeOf(run(backend, write)), expected.refused, "retry");
              expect(await snapshot(backend)).toBe(before);
              continue;
            }
            if ("error" in result) throw result.error;
            if ("storedAlready" in expected) {
              expect(await snapshot(backend)).toBe(before);
              continue;
            }
            const message = JSON.parse(expected.stored) as SessionMessage;
            stored.set(message.id, { session: write.session, json: expected.stored });
            const path = paths[write.session] as string[];
            const store = backend.messages(sessionIds[write.session] as string);
            const node = await store.getNode(message.id);
            expect(node?.role).toBe(message.role);
            expect(node?.parentId).toBe(leaves[write.session]);
            leaves[write.session] = message.id;
            path.push(expected.stored);
            expect(JSON.stringify(await store.getMessage(message.id))).toBe(expected.stored);
          }
          for (const [index, sessionId] of sessionIds.entries()) {
            const history = await backend.messages(sessionId).getHistory();
            expect(history.map((message) => JSON.stringify(message))).toEqual(paths[index]);
            expect(history).toEqual((paths[index] as string[]).map((text) => JSON.parse(text)));
          }
        }),
        { numRuns: 150 },
      );
    });
  });
}

/** A message of about `bytes` bytes of stored JSON (tool output a client sends back, a data URL). */
function largeMessage(id: string, fill: string, bytes: number): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: [
      { type: "tool-readFile", toolCallId: "c1", state: "output-available", output: fill.repeat(bytes) },
    ],
  };
}

const largeAppend = fc.record({
  session: fc.constantFrom(0, 1),
  id: fc.constantFrom("a", "a", "b"),
  fill: fc.constantFrom("x", "é", "😀"),
  // Under, just over, and well over the 1.5 MiB a row keeps inline (1 and 2 continuation rows).
  bytes: fc.constantFrom(1_000, 1_600_000, 3_200_000),
});

for (const backendUnderTest of backends) {
  describe(`messages over a Durable Object row on ${backendUnderTest.name}`, () => {
    it("a refused append of a large message with a stored id leaves the stored message exactly as it was", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(largeAppend, { minLength: 2, maxLength: 3 }), async (writes) => {
          const backend = backendUnderTest.open();
          const stored = new Map<string, Stored>();
          const read = async (id: string) => {
            const owner = stored.get(id);
            if (owner === undefined) return null;
            return JSON.stringify(await backend.messages(sessionIds[owner.session] as string).getMessage(id));
          };
          for (const write of writes) {
            const message = largeMessage(write.id, write.fill, write.bytes / write.fill.length);
            const append: Append = { session: write.session, via: "store", message };
            const expected = expectedOutcome(append, stored, backendUnderTest);
            const result = await outcomeOf(run(backend, append));
            if ("refused" in expected) {
              expectRefusal(result, expected.refused, "large");
              // Compared as a boolean: a failure message of megabytes helps no one.
              expect(
                (await read(message.id)) === stored.get(message.id)?.json,
                "stored message changed",
              ).toBe(true);
            } else if ("error" in result) {
              throw result.error;
            } else if ("stored" in expected) {
              stored.set(message.id, { session: write.session, json: expected.stored });
              expect((await read(message.id)) === expected.stored, "read back changed").toBe(true);
            }
          }
          for (const [index, sessionId] of sessionIds.entries()) {
            const history = await backend.messages(sessionId).getHistory();
            const expected = [...stored.values()].filter((entry) => entry.session === index);
            expect(
              history.map((message) => JSON.stringify(message)).join() ===
                expected.map((entry) => entry.json).join(),
            ).toBe(true);
          }
        }),
        {
          numRuns: 4,
          // Always tried: a large message appended in another session under a stored id.
          examples: [
            [
              [
                { session: 0, id: "a", fill: "x", bytes: 1_600_000 },
                { session: 1, id: "a", fill: "é", bytes: 3_200_000 },
              ],
            ],
          ],
        },
      );
    }, 60_000);
  });
}

describe("continuation rows of a refused append", () => {
  for (const layout of ["lean", "keyed"] as const) {
    it(`are not left behind, and never read back as part of a later message with the id (${layout})`, async () => {
      const database = new Database(":memory:");
      const backend = sqliteBackend(database, { newDatabaseLayout: layout });
      const store = backend.messages("chat");
      const chunkRows = () =>
        (
          database.prepare("SELECT COUNT(*) AS count FROM assistant_message_chunks").get() as {
            count: number;
          }
        ).count;
      await store.appendMessage(largeMessage("a", "x", 100));
      await store.appendMessage(largeMessage("b", "x", 100));
      // "a" deleted while "b" still names it: appending "a" again is refused (it could close a cycle).
      await store.deleteMessages(["a"]);
      const refused = await outcomeOf(store.appendMessage(largeMessage("a", "é", 3_200_000 / 2)));
      expectRefusal(refused, /is still the parent of stored messages/, "a deleted parent's id");
      expect(chunkRows()).toBe(0);
      await store.deleteMessages(["b"]);
      const shorter = largeMessage("a", "x", 1_600_000);
      await store.appendMessage(shorter);
      expect(JSON.stringify(await store.getMessage("a")) === JSON.stringify(shorter)).toBe(true);
      expect(chunkRows()).toBe(1);
    });
  }
});
