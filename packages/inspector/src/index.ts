import { type ContextBlocks, ContextError, isContextError } from "@contextblocks/core";
import { describeValue, errorMessage } from "@contextblocks/core/store-kit";
import type { Session, SessionManager } from "@contextblocks/sessions";
import { readBodyText } from "./body-text.js";
import { CLIENT_SCRIPT } from "./client.js";
import { DEFAULT_EVENT_BUFFER_BYTES, type EventSourceLike, eventStream } from "./event-stream.js";
import { canRestore } from "./history.js";
import { renderPage } from "./render.js";
import { buildSnapshot } from "./snapshot.js";

export type { EventSourceLike } from "./event-stream.js";
export { toNodeListener } from "./node.js";
export type { BlockView, CompactionView, InspectorSnapshot, SessionView, TreeNodeView } from "./snapshot.js";
export { readTree } from "./tree.js";

/**
 * What a request may do: `"read"` the page, its JSON and its events; `"write"` also restore a block
 * version. `false` refuses (401); a `Response` is sent as it is (a login redirect, a 401 with
 * `WWW-Authenticate`).
 */
export type InspectorAccess = "read" | "write" | false | Response;

export interface InspectorOptions {
  /** The blocks and frozen prompt shown. Default: the session's `context` when `sessions` is a `Session`. */
  context?: ContextBlocks;
  /** The session, or the manager whose sessions are shown (their trees, overlays and search). */
  sessions?: SessionManager | Session;
  /**
   * Decides what each request may do. Required: the page shows private memory, so an inspector without it
   * answers every request with 403.
   */
  authorize?: (request: Request) => InspectorAccess | Promise<InspectorAccess>;
  /** The path the inspector is mounted under (`"/inspector"`); requests elsewhere get 404. Default `""`. */
  basePath?: string;
  /** The page's heading. Default `"Agent memory"`. */
  title?: string;
  /** Messages of a session's tree shown. Default 400. */
  treeLimit?: number;
  /**
   * Where live events come from. Default: the `Session`'s `subscribe` (it forwards its blocks' events);
   * for a `SessionManager`, its `subscribe` and the `context`'s.
   */
  events?: EventSourceLike;
  /**
   * Bytes of events held for one subscriber of `/events` that is not reading (a stalled tab, a slow
   * network). Past it the subscriber is disconnected (its browser reconnects). Default 1 MiB.
   */
  eventBufferBytes?: number;
}

/** The header a restore must carry: a cross-site form cannot set it, so a restore is never forged. */
export const RESTORE_HEADER = "x-contextblocks-inspector";

/** A restore's body is `{ label, version }`: far less than this. */
const MAX_RESTORE_BYTES = 16 * 1024;

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * The inspector as a request handler (`(request: Request) => Promise<Response>`, the Fetch API's types):
 * return it from a Worker's or a Durable Object's `fetch`, or wrap it with `toNodeListener` for
 * `node:http`. Routes under `basePath`: `GET /` the page (`?q=` searches the sessions), `GET
 * /snapshot.json`, `GET /events` (Server-Sent Events), `GET /app.js`, `POST /restore` (`{ label, version
 * }`, write access and the `x-contextblocks-inspector: restore` header).
 */
export function createInspector(options: InspectorOptions): (request: Request) => Promise<Response> {
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `createInspector: expected options, got ${describeValue(options)}`,
    );
  }
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const sessions = options.sessions;
  const context =
    options.context ??
    (sessions !== undefined && "context" in sessions ? (sessions as Session).context : undefined);
  const title = options.title ?? "Agent memory";
  const treeLimit = options.treeLimit ?? 400;
  const events = options.events ?? defaultEvents(options.context, sessions);
  const authorize = options.authorize;
  const eventBufferBytes = options.eventBufferBytes ?? DEFAULT_EVENT_BUFFER_BYTES;
  if (!Number.isSafeInteger(eventBufferBytes) || eventBufferBytes < 1) {
    throw new ContextError(
      "INVALID_CONFIG",
      `createInspector: eventBufferBytes must be a positive integer of bytes, got ${describeValue(eventBufferBytes)}`,
    );
  }

  return async (request) => {
    try {
      if (typeof authorize !== "function") {
        return text(
          403,
          "The inspector has no authorize option, so it lets no one in (it shows private memory).",
        );
      }
      const url = new URL(request.url);
      if (url.pathname !== base && !url.pathname.startsWith(`${base}/`))
        return text(404, "Not the inspector");
      const path = url.pathname.slice(base.length) || "/";
      const access = await authorize(request);
      if (access instanceof Response) return access;
      if (access !== "read" && access !== "write") return text(401, "Not authorised to inspect this agent");
      const method = request.method === "HEAD" ? "GET" : request.method;
      const source = { context, sessions };
      if (path === "/restore") {
        if (method !== "POST") return text(405, "Use POST", { allow: "POST" });
        return restore(request, access, context);
      }
      if (method !== "GET") return text(405, "Use GET", { allow: "GET, HEAD" });
      switch (path) {
        case "/": {
          const snapshot = await buildSnapshot(source, {
            title,
            query: url.searchParams.get("q"),
            mayWrite: access === "write",
            treeLimit,
          });
          return new Response(renderPage(snapshot, base), { headers: PAGE_HEADERS });
        }
        case "/snapshot.json": {
          const snapshot = await buildSnapshot(source, {
            title,
            query: url.searchParams.get("q"),
            mayWrite: access === "write",
            treeLimit,
          });
          return new Response(JSON.stringify(snapshot), {
            headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
          });
        }
        case "/app.js":
          return new Response(CLIENT_SCRIPT, {
            headers: {
              "content-type": "text/javascript; charset=utf-8",
              "cache-control": "no-store",
              "x-content-type-options": "nosniff",
            },
          });
        case "/events":
          return eventStream(events, request.signal, eventBufferBytes);
        default:
          return text(404, `No inspector route ${path}`);
      }
    } catch (error) {
      return text(500, `The inspector failed: ${errorMessage(error)}`);
    }
  };
}

async function restore(
  request: Request,
  access: "read" | "write",
  context: ContextBlocks | undefined,
): Promise<Response> {
  if (access !== "write") return text(403, "Read-only access: restoring a version needs write access");
  if (request.headers.get(RESTORE_HEADER) !== "restore") {
    return text(403, `A restore must carry the ${RESTORE_HEADER}: restore header`);
  }
  if (!canRestore(context)) return text(501, "This context keeps no block history (no restoreBlock)");
  let body: unknown;
  try {
    const received = await readBodyText(request, MAX_RESTORE_BYTES);
    if (received === null) {
      return text(413, `A restore's body is at most ${MAX_RESTORE_BYTES} bytes: { label, version }`);
    }
    body = JSON.parse(received);
  } catch (error) {
    return text(400, `The body must be JSON: { label, version } (${errorMessage(error)})`);
  }
  const { label, version } = (body ?? {}) as { label?: unknown; version?: unknown };
  if (typeof label !== "string" || typeof version !== "number" || !Number.isInteger(version)) {
    return text(400, `Expected { label: string, version: integer }, got ${describeValue(body)}`);
  }
  try {
    await context.restoreBlock(label, version);
  } catch (error) {
    const status = restoreFailureStatus(error);
    const message = errorMessage(error);
    return text(status, status === 500 ? `The inspector failed: ${message}` : message);
  }
  return new Response(JSON.stringify({ restored: { label, version } }), {
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

/**
 * Whose fault a failed restore is: the request's (a label or version that is not there, a block that cannot
 * take it), a history the context does not keep (501), or the store's (500: a failed or timed-out provider,
 * any other error), never reported as the client's mistake.
 */
function restoreFailureStatus(error: unknown): number {
  if (!isContextError(error)) return 500;
  switch (error.code) {
    case "NOT_FOUND":
      return 404;
    case "UNSUPPORTED":
      return 501;
    case "CONFLICT":
      return 409;
    case "INVALID_INPUT":
    case "READONLY":
    case "KEYED_BLOCK":
    case "MAX_TOKENS":
      return 400;
    default:
      return 500;
  }
}

function defaultEvents(
  context: ContextBlocks | undefined,
  sessions: SessionManager | Session | undefined,
): EventSourceLike | undefined {
  const sources: EventSourceLike[] = [];
  if (sessions !== undefined) sources.push((listener) => sessions.subscribe(listener));
  const isSession = sessions !== undefined && typeof (sessions as SessionManager).list !== "function";
  if (context !== undefined && !isSession) sources.push((listener) => context.subscribe(listener));
  if (sources.length === 0) return undefined;
  return (listener) => {
    const stops = sources.map((subscribe) => subscribe(listener));
    return () => {
      for (const stop of stops) stop();
    };
  };
}

function text(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(message, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}
