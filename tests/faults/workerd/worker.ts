import { DurableObject } from "cloudflare:workers";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { type SqliteBackend, sqliteBackend } from "@contextblocks/sqlite";
import { batchMessages, batchScript } from "../src/batches.js";
import { checkTranscript, type TranscriptFindings } from "../src/transcript-check.js";
import { takeTurn, turnScript } from "../src/turns.js";

/**
 * A Durable Object with SQLite storage that many writers call at once. Each call opens a new `Session`
 * on the object's storage, as a Durable Object serving requests does; `reset()` aborts the object
 * (`ctx.abort`), as a crash or a deploy would: calls in flight fail, the next call starts a new instance
 * on the same storage.
 */
export class FaultsObject extends DurableObject {
  #backend: SqliteBackend | undefined;

  #session(sessionId: string): Session {
    this.#backend ??= sqliteBackend(this.ctx.storage);
    return new SessionBuilder(this.#backend).forSession(sessionId).build();
  }

  /** Appends writer `writer`'s batch `batch` to the session; resolves with its message ids once stored. */
  async appendBatch(sessionId: string, writer: string, batch: number): Promise<string[]> {
    const messages = batchMessages(batch, writer);
    await this.#session(sessionId).appendMessages(messages);
    return messages.map((message) => message.id);
  }

  /** Takes turn `turn` on the session through the pipeline; resolves with the ids it stored. */
  takeTurn(sessionId: string, turn: number): Promise<string[]> {
    return takeTurn(this.#session(sessionId), turn);
  }

  /** Checks the session as a new reader finds it. */
  check(sessionId: string, acknowledged: string[], mode: "appends" | "turns"): Promise<TranscriptFindings> {
    this.#backend ??= sqliteBackend(this.ctx.storage);
    return checkTranscript(
      this.#backend.messages(sessionId),
      acknowledged,
      mode === "turns" ? turnScript : batchScript,
    );
  }

  reset(): void {
    this.ctx.abort("faults: the object was reset");
  }
}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks faults worker");
  },
} satisfies ExportedHandler;
