import { errorMessage } from "@contextblocks/core/store-kit";
import type { SessionMessage } from "@contextblocks/sessions";

/** Something that reaches the connected clients: an agents `Agent` (`this.broadcast`). */
export interface Broadcaster {
  broadcast(message: string): void;
}

/** agents' message-change event, for `internal_onMessagesChanged` (hosts that mirror the stored messages). */
export type MessageChangeEvent =
  | { type: "append"; message: SessionMessage; parentId?: string | null | undefined; inserted: boolean }
  | { type: "update"; message: SessionMessage }
  | { type: "delete"; messageIds: string[] }
  | { type: "clear" }
  | { type: "compact" };

export type MessageChangeListener = (event: MessageChangeEvent) => void | Promise<void>;

/** The frame types agents' clients listen for (`MessageType.CF_AGENT_SESSION` / `_ERROR` in agents). */
export const SESSION_STATUS_FRAME = "cf_agent_session";
export const SESSION_ERROR_FRAME = "cf_agent_session_error";

export function isBroadcaster(value: unknown): value is Broadcaster {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<Broadcaster>).broadcast === "function"
  );
}

/**
 * The status frames agents' `Session` sends to connected clients: `{ type: "cf_agent_session", phase:
 * "idle" | "compacting", tokenEstimate, tokenThreshold }` after each write and around a compaction (with
 * `compacted: { tokensBefore }` when one was stored), and `{ type: "cf_agent_session_error", error }`.
 * Only sent when the session was created from something that broadcasts (an Agent).
 */
export class SessionStatus {
  broadcaster: Broadcaster | undefined;
  listener: MessageChangeListener | undefined;
  threshold: number | undefined;

  constructor(private readonly estimate: () => Promise<number>) {}

  /** Sends a status frame and returns the estimate it carried (0 when nothing broadcasts). */
  async send(phase: "idle" | "compacting", extra: Record<string, unknown> = {}): Promise<number> {
    const broadcaster = this.broadcaster;
    if (broadcaster === undefined) return 0;
    let tokenEstimate = 0;
    try {
      tokenEstimate = await this.estimate();
    } catch (error) {
      this.error(error);
    }
    broadcaster.broadcast(
      JSON.stringify({
        type: SESSION_STATUS_FRAME,
        phase,
        tokenEstimate,
        tokenThreshold: this.threshold ?? null,
        ...extra,
      }),
    );
    return tokenEstimate;
  }

  error(error: unknown): void {
    const message = errorMessage(error);
    this.broadcaster?.broadcast(JSON.stringify({ type: SESSION_ERROR_FRAME, error: message }));
  }

  async notify(event: MessageChangeEvent): Promise<void> {
    await this.listener?.(event);
  }
}
