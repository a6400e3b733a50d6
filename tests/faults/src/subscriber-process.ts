/**
 * The process slow-subscriber.ts measures (started with `--expose-gc`): a `Session` on a better-sqlite3
 * file database and the inspector over it; with `subscriber: "never-reads"`, one `GET /events` whose
 * body is never read. It appends `appends` messages of `messageBytes` each, collects garbage, and reports
 * how much memory (heap and external: the event stream's queued chunks are external) the appends left
 * behind, then the same after the subscriber's stream is cancelled, and whether every message was stored.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInspector } from "@contextblocks/inspector";
import { SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import Database from "better-sqlite3";

export interface SubscriberOptions {
  appends: number;
  messageBytes: number;
  subscriber: "none" | "never-reads";
}

export interface SubscriberReport {
  /** Memory the appends left behind (heap and external, after a full collection), in bytes. */
  heldAfterAppends: number;
  /** The same once the subscriber's stream was cancelled (`null` without a subscriber). */
  heldAfterCancel: number | null;
  /** `null` when every message was stored as sent, else what was wrong. */
  storageProblem: string | null;
}

const options = JSON.parse(process.argv[2] ?? "{}") as SubscriberOptions;
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error("subscriber-process: start it with --expose-gc");
/** Heap and external memory in use after full collections (ArrayBuffers are freed after the collection that finds them). */
const used = async () => {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 10));
  collect();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};

const directory = mkdtempSync(join(tmpdir(), "contextblocks-subscriber-"));
const database = new Database(join(directory, "session.sqlite"));
database.pragma("journal_mode = wal");
const session = new SessionBuilder(sqliteBackend(database)).forSession("chat").build();
const inspector = createInspector({ sessions: session, authorize: () => "read" });
const response =
  options.subscriber === "never-reads" ? await inspector(new Request("http://inspector.test/events")) : null;
if (response !== null && response.status !== 200) throw new Error(`GET /events answered ${response.status}`);

const sent: SessionMessage[] = Array.from({ length: options.appends }, (_, index) => ({
  id: `large-${index}`,
  role: index % 2 === 0 ? "user" : "assistant",
  parts: [{ type: "text", text: `message ${index}: `.padEnd(options.messageBytes, "lorem ipsum ") }],
}));
// Serialized once first: V8 flattens a built-up string in place the first time it is read, which would
// count against the appends. A first append creates the tables: not counted either.
JSON.stringify(sent);
await session.appendMessage({ id: "first", role: "user", parts: [{ type: "text", text: "hello" }] });
const before = await used();
for (const message of sent) await session.appendMessage(message);
const heldAfterAppends = (await used()) - before;
let heldAfterCancel: number | null = null;
if (response?.body) {
  await response.body.cancel();
  heldAfterCancel = (await used()) - before;
}
const stored = (await session.getHistory()).slice(1);
const storageProblem =
  stored.length !== sent.length
    ? `${stored.length} of ${sent.length} messages stored`
    : stored.every((message, index) => message.parts[0]?.text === sent[index]?.parts[0]?.text)
      ? null
      : "a message reads back changed";
database.close();
rmSync(directory, { recursive: true, force: true });
process.send?.({ heldAfterAppends, heldAfterCancel, storageProblem } satisfies SubscriberReport);
