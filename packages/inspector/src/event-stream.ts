import { ContextError } from "@contextblocks/core";
import { eventView } from "./event-view.js";

/** A source of lifecycle events: subscribe a listener, get the function that unsubscribes. */
export type EventSourceLike = (listener: (event: object) => void) => () => void;

/** Bytes of events held for one subscriber that is not reading, by default: thousands of events. */
export const DEFAULT_EVENT_BUFFER_BYTES = 1024 * 1024;

const HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/**
 * Lifecycle events as Server-Sent Events (`event: lifecycle`, the `eventView` of each). Events wait in the
 * stream's queue until the reader (the platform, as fast as the client reads) takes them; a subscriber
 * whose queue would pass `bufferBytes` is disconnected (unsubscribed, the stream failed, its queue
 * dropped), so a client that stops reading holds at most `bufferBytes` of the host's memory.
 */
export function eventStream(
  events: EventSourceLike | undefined,
  signal: AbortSignal,
  bufferBytes: number,
): Response {
  const encoder = new TextEncoder();
  let unsubscribe: (() => void) | undefined;
  let open = true;
  const stop = () => {
    open = false;
    const stopping = unsubscribe;
    unsubscribe = undefined;
    stopping?.();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(": connected\n\n"));
        const listener = (event: object) => {
          if (!open) return;
          const chunk = encoder.encode(`event: lifecycle\ndata: ${JSON.stringify(eventView(event))}\n\n`);
          // `desiredSize` is the room left under the bound: `bufferBytes` less what waits unread.
          const room = controller.desiredSize;
          if (room === null || chunk.byteLength > room) {
            stop();
            try {
              controller.error(
                new ContextError(
                  "UNSUPPORTED",
                  `The inspector's event stream disconnected a subscriber: its unread events passed eventBufferBytes (${bufferBytes} bytes). Reconnect to resume.`,
                ),
              );
            } catch {
              // Closed already.
            }
            return;
          }
          controller.enqueue(chunk);
        };
        const end = () => {
          stop();
          try {
            controller.close();
          } catch {
            // Closed or failed already.
          }
        };
        const stopping = events?.(listener);
        // A listener call may have disconnected it while subscribing.
        if (open) unsubscribe = stopping;
        else stopping?.();
        if (signal.aborted) end();
        else signal.addEventListener("abort", end, { once: true });
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: bufferBytes, size: (chunk) => chunk.byteLength },
  );
  return new Response(stream, { headers: HEADERS });
}
