/**
 * A writer process for the killed-writer scenario (killed-writer.ts forks it and kills it with SIGKILL at
 * a random moment): it opens a better-sqlite3 file database, then appends to one `Session` until it is
 * killed, from batch or turn `start` on. It reports an append only after the append resolved, over IPC.
 */
import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { batchMessages, placeOf } from "./batches.js";
import type { WriterMessage, WriterOptions } from "./writer-protocol.js";

const options = JSON.parse(process.argv[2] ?? "{}") as WriterOptions;
const send = (message: WriterMessage) => process.send?.(message);
// A writer whose parent is gone (a harness stopped early) stops too, rather than appending forever.
process.on("disconnect", () => process.exit(1));

const database = new Database(options.database);
database.pragma(`journal_mode = ${options.journalMode}`);
database.pragma("busy_timeout = 10000");
const session = new SessionBuilder(sqliteBackend(database, { newDatabaseLayout: options.layout }))
  .forSession(options.sessionId)
  .build();
if (options.crashPoint !== undefined) {
  const crashPoint = options.crashPoint;
  // Listeners hear an append right after it was stored, before the next one starts.
  session.subscribe((event) => {
    if (event.type !== "message-appended") return;
    const atPoint =
      crashPoint === "inside-a-batch"
        ? placeOf(event.messageId)?.index === 0 &&
          batchMessages(placeOf(event.messageId)?.batch ?? 0).length > 1
        : event.message.parts.some((part) => part.state === "input-available");
    if (atPoint) process.kill(process.pid, "SIGKILL");
  });
}
// The turns need the AI SDK: loaded only for them.
const takeTurn = options.mode === "turns" ? (await import("./turns.js")).takeTurn : undefined;
send({ type: "ready" });
for (let index = options.start; ; index++) {
  let ids: string[];
  if (takeTurn !== undefined) {
    ids = await takeTurn(session, index);
  } else {
    const batch = batchMessages(index);
    await session.appendMessages(batch);
    ids = batch.map((message) => message.id);
  }
  send({ type: "acknowledged", index, ids, heapUsed: process.memoryUsage().heapUsed });
  // A task boundary between writes, as between two requests (the IPC channel and `disconnect` get a turn).
  await new Promise((resolve) => setImmediate(resolve));
}
