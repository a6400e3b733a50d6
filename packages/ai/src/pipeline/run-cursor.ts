import type { RunMessage } from "./model-types.js";

/**
 * How many sessions' last calls are remembered to recognise the next step of a tool loop. The next step
 * follows within the same `generateText` call, so only sessions with a loop in flight need it.
 */
const REMEMBERED_SESSIONS = 1_000;

/** What the pipeline remembers of a session's last successful call, to recognise the SDK's next step. */
export interface Cursor {
  /** The caller's messages of that call, each as JSON. */
  callerMessages: string[];
  /** The history each loading plugin gave that call, reused on a continuation. */
  loaded: Map<string, RunMessage[]>;
}

/** Calls remembered per session: overlapping calls of one session (two tabs, a retry) each keep theirs. */
const CURSORS_PER_SESSION = 8;

/** The last calls of the most recent sessions (a bounded map: a server with many sessions stays small). */
export class RecentCursors {
  readonly #cursors = new Map<string, Cursor[]>();

  /** The remembered calls of a session, newest first. */
  get(sessionId: string): readonly Cursor[] {
    return this.#cursors.get(sessionId) ?? [];
  }

  remember(sessionId: string, cursor: Cursor, replaces?: Cursor): void {
    const kept = (this.#cursors.get(sessionId) ?? []).filter((entry) => entry !== replaces);
    this.#cursors.delete(sessionId);
    this.#cursors.set(sessionId, [cursor, ...kept].slice(0, CURSORS_PER_SESSION));
    if (this.#cursors.size > REMEMBERED_SESSIONS) {
      const oldest = this.#cursors.keys().next().value;
      if (oldest !== undefined) this.#cursors.delete(oldest);
    }
  }
}

/**
 * The number of leading caller messages a call shares with the session's last call, plus the assistant
 * message the SDK made of that call's response (already stored): what each step of a tool loop sends.
 * `null` when the call does not continue the last one.
 */
export function continuedCall(
  remembered: readonly Cursor[],
  callerJson: readonly string[],
  callerMessages: readonly RunMessage[],
): { cursor: Cursor; count: number } | null {
  let best: { cursor: Cursor; count: number } | null = null;
  for (const cursor of remembered) {
    const count = continuedCount(cursor, callerJson, callerMessages);
    if (count !== null && (best === null || count > best.count)) best = { cursor, count };
  }
  return best;
}

export function continuedCount(
  previous: Cursor | undefined,
  callerJson: readonly string[],
  callerMessages: readonly RunMessage[],
): number | null {
  if (previous === undefined) return null;
  const count = previous.callerMessages.length;
  if (callerJson.length <= count || callerMessages[count]?.role !== "assistant") return null;
  for (let index = 0; index < count; index++) {
    if (callerJson[index] !== previous.callerMessages[index]) return null;
  }
  return count + 1;
}
