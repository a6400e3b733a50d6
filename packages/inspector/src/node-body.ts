import { ContextError } from "@contextblocks/core";

/** The parts of `node:http`'s `IncomingMessage` the request body reads. */
export interface NodeBodySource {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

export interface NodeRequestBody {
  /** The body as the handler reads it: nothing is read from the socket until the handler asks. */
  stream: ReadableStream<Uint8Array>;
  /** After the response: lets the unread rest of the body pass without keeping it. */
  discard(): void;
}

/**
 * A request's body read on demand, one socket chunk at a time: a handler that refuses the request before
 * reading it (a 401) never receives it, one that reads it holds at most one chunk ahead, and a body past
 * `maxBytes` fails the stream with an error naming the limit.
 */
export function nodeRequestBody(incoming: NodeBodySource, maxBytes: number): NodeRequestBody {
  let listening = false;
  let finished = false;
  let received = 0;
  let cancelRead: (() => void) | undefined;
  const detach = (onData: (chunk: Uint8Array) => void) => {
    finished = true;
    incoming.removeListener("data", onData);
    // Flowing with no listener: the rest arrives and is dropped (what Node does to a body nobody read).
    incoming.resume();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!listening) {
          listening = true;
          const onData = (chunk: Uint8Array) => {
            if (finished) return;
            received += chunk.byteLength;
            if (received > maxBytes) {
              detach(onData);
              controller.error(
                new ContextError(
                  "INVALID_INPUT",
                  `The request body is over maxBodyBytes (${maxBytes} bytes); nothing past it was read`,
                ),
              );
              return;
            }
            controller.enqueue(chunk);
            // One chunk ahead at most: wait for the next `pull` (the handler reading) before more.
            if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
          };
          incoming.on("data", onData);
          incoming.on("end", () => {
            if (finished) return;
            finished = true;
            controller.close();
          });
          incoming.on("error", (error) => {
            if (finished) return;
            finished = true;
            controller.error(error);
          });
          cancelRead = () => detach(onData);
        }
        incoming.resume();
      },
      cancel() {
        cancelRead?.();
      },
    },
    // Nothing is read ahead of the handler: the first read of the socket is the handler's first read.
    { highWaterMark: 0 },
  );
  return {
    stream,
    discard() {
      if (listening && !finished) cancelRead?.();
    },
  };
}
