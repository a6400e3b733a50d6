import { ContextError } from "@contextblocks/core";
import { describeValue, errorMessage } from "@contextblocks/core/store-kit";
import { type NodeBodySource, nodeRequestBody } from "./node-body.js";

/** The parts of `node:http`'s `IncomingMessage` the adapter reads (no import of `node:http`). */
export interface NodeRequestLike extends NodeBodySource {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** The parts of `node:http`'s `ServerResponse` the adapter writes. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  /** False when the connection's buffer is full: the adapter then waits for `drain`. */
  write(chunk: Uint8Array): boolean;
  end(chunk?: string): unknown;
  on(event: "close" | "drain", listener: () => void): unknown;
  removeListener(event: "drain", listener: () => void): unknown;
  readonly headersSent?: boolean;
}

export interface NodeListenerOptions {
  /**
   * The largest request body passed to the handler, in bytes. A larger declared `Content-Length` gets 413
   * before the handler runs; a longer chunked body fails the handler's read. Default 1 MiB.
   */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * A `node:http` request listener over a Fetch API handler (`createInspector(…)`): `http.createServer(
 * toNodeListener(inspector))`, or call it from an Express or Fastify route. The handler gets the request
 * as soon as its head arrives and reads the body only if it wants it (after its authorization, so a
 * refused request is never buffered), at most `maxBodyBytes` of it. The response is streamed as fast as
 * the client reads it (the event stream stays open until the client leaves). A request the adapter cannot
 * turn into a `Request` (a `Host` header that is not a host) gets 400, a handler that throws gets 500:
 * neither reaches the process.
 */
export function toNodeListener(
  handler: (request: Request) => Promise<Response>,
  options: NodeListenerOptions = {},
): (request: NodeRequestLike, response: NodeResponseLike) => void {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new ContextError(
      "INVALID_CONFIG",
      `toNodeListener: maxBodyBytes must be a positive integer of bytes, got ${describeValue(maxBodyBytes)}`,
    );
  }
  return (incoming, outgoing) => {
    respond(handler, incoming, outgoing, maxBodyBytes).catch(() => {
      // `respond` answers every failure itself; this only keeps a last surprise off the process.
      outgoing.end();
    });
  };
}

async function respond(
  handler: (request: Request) => Promise<Response>,
  incoming: NodeRequestLike,
  outgoing: NodeResponseLike,
  maxBodyBytes: number,
): Promise<void> {
  const abort = new AbortController();
  outgoing.on("close", () => abort.abort());
  // Without a listener, a client that leaves mid-body would make `incoming` throw its error.
  incoming.on("error", () => abort.abort());
  const method = incoming.method ?? "GET";

  const url = requestUrl(incoming.url ?? "/", firstValue(incoming.headers.host));
  if (url === null) return plain(outgoing, 400, "Bad request: the Host header or the path is not a URL");
  let headers: Headers;
  try {
    headers = requestHeaders(incoming.headers);
  } catch (error) {
    return plain(outgoing, 400, `Bad request: ${errorMessage(error)}`);
  }
  const declared = Number(headers.get("content-length") ?? "0");
  const hasBody =
    method !== "GET" &&
    method !== "HEAD" &&
    (headers.has("transfer-encoding") || (Number.isFinite(declared) && declared > 0));
  if (hasBody && declared > maxBodyBytes) {
    return plain(outgoing, 413, `The request body is over maxBodyBytes (${maxBodyBytes} bytes)`);
  }
  const body = hasBody ? nodeRequestBody(incoming, maxBodyBytes) : undefined;
  let request: Request;
  try {
    request = new Request(url, {
      method,
      headers,
      signal: abort.signal,
      // A stream body is sent as it is read (`duplex: "half"`, as the Fetch standard requires).
      ...(body !== undefined ? { body: body.stream, duplex: "half" as const } : {}),
    });
  } catch (error) {
    return plain(outgoing, 400, `Bad request: ${errorMessage(error)}`);
  }

  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    body?.discard();
    return plain(outgoing, 500, `The handler failed: ${errorMessage(error)}`);
  }
  await writeResponse(response, method, outgoing, abort.signal);
  body?.discard();
}

/** Streams `response` out, one chunk at a time, waiting for `drain` whenever the connection is full. */
async function writeResponse(
  response: Response,
  method: string,
  outgoing: NodeResponseLike,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  try {
    outgoing.writeHead(response.status, headers);
  } catch (error) {
    // A header value Node refuses (outside Latin-1): nothing was sent yet.
    await response.body?.cancel().catch(() => undefined);
    if (outgoing.headersSent !== true) {
      return plain(outgoing, 500, `The handler's response cannot be sent: ${errorMessage(error)}`);
    }
    outgoing.end();
    return;
  }
  if (response.body === null || method === "HEAD") {
    await response.body?.cancel().catch(() => undefined);
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  try {
    while (!signal.aborted) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      if (!outgoing.write(value)) await drained(outgoing, signal);
    }
  } catch {
    // The body failed (an event stream disconnected a subscriber that fell behind), or the client left.
  } finally {
    signal.removeEventListener("abort", cancel);
  }
  outgoing.end();
}

/** Resolves when the connection takes writes again, or when it closed. */
function drained(outgoing: NodeResponseLike, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.removeListener("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    outgoing.on("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Characters a host (name or `[address]`, with a port) never holds: a path, a query, credentials, space. */
const NOT_IN_HOST = /[\s/?#@\\]/;

/**
 * The request's URL from its target and `Host` header: `null` when they do not make one. An absolute
 * target (sent to a proxy) is taken as it is; a missing `Host` (HTTP/1.0) reads as `localhost`.
 */
function requestUrl(target: string, host: string | undefined): URL | null {
  try {
    if (!target.startsWith("/")) {
      const absolute = new URL(target);
      return absolute.protocol === "http:" || absolute.protocol === "https:" ? absolute : null;
    }
    const name = host ?? "localhost";
    if (name === "" || NOT_IN_HOST.test(name)) return null;
    // Joined as text: a target such as `//other/path` stays a path on this host.
    return new URL(`http://${name}${target}`);
  } catch {
    return null;
  }
}

function requestHeaders(incoming: NodeRequestLike["headers"]): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A plain-text answer that closes the connection (the rest of a body sent with it is never read). */
function plain(outgoing: NodeResponseLike, status: number, message: string): void {
  outgoing.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    connection: "close",
  });
  outgoing.end(message);
}
