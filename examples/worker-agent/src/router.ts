import type { AgentObject } from "./agent-object.js";
import { isIsoDate } from "./dates.js";
import { ENDPOINTS } from "./endpoints.js";
import {
  describe,
  errorResponse,
  HttpError,
  json,
  readJsonBody,
  refuseUnknownFields,
  requireObject,
} from "./http.js";
import { type ChatResult, isRefusal, type Refusal } from "./snapshot.js";

/** Longest chat message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 8_000;
/** Longest conversation name accepted, in characters. */
export const MAX_SESSION_NAME_LENGTH = 100;
/** Longest session or message id accepted (the ids the agent makes are 36-character UUIDs). */
const MAX_ID_LENGTH = 128;

const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A UTF-16 surrogate not part of a pair (with the `u` flag a pair is one code point, never matched). */
const LONE_SURROGATE = /\p{Cs}/u;

type Action =
  | "inspect"
  | "prompt"
  | "blocks"
  | "history"
  | "restore"
  | "chat"
  | "edit"
  | "sessions"
  | "refresh"
  | "date";

/**
 * The actions under `/agents/:id`, by path segment. A `Map`, not an object literal: a segment such as
 * `__proto__`, `constructor` or `toString` must not find an inherited property and pass for a route.
 */
const ROUTES: ReadonlyMap<string, { action: Action; method: "GET" | "POST" | "PUT" }> = new Map([
  ["", { action: "inspect", method: "GET" }],
  ["prompt", { action: "prompt", method: "GET" }],
  ["blocks", { action: "blocks", method: "GET" }],
  ["history", { action: "history", method: "GET" }],
  ["restore", { action: "restore", method: "POST" }],
  ["chat", { action: "chat", method: "POST" }],
  ["edit", { action: "edit", method: "POST" }],
  ["sessions", { action: "sessions", method: "POST" }],
  ["refresh", { action: "refresh", method: "POST" }],
  ["date", { action: "date", method: "PUT" }],
]);

/**
 * Routes a request. Everything about the request is checked here, before the agent's Durable Object is
 * called, so a bad request never reaches storage.
 */
export async function route(
  request: Request,
  agents: DurableObjectNamespace<AgentObject>,
): Promise<Response> {
  try {
    return await dispatch(request, agents);
  } catch (error) {
    if (error instanceof HttpError) return errorResponse(error);
    const message = error instanceof Error ? error.message : String(error);
    return json({ error: `The agent failed: ${message}` }, 502);
  }
}

async function dispatch(request: Request, agents: DurableObjectNamespace<AgentObject>): Promise<Response> {
  const url = new URL(request.url);
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (url.pathname === "/") {
    if (method !== "GET") throw methodNotAllowed("GET");
    return json({ name: "contextblocks worker-agent", try: "/agents/demo", endpoints: ENDPOINTS });
  }
  // The inspector (@contextblocks/inspector) runs in the agent's Durable Object, which checks the token.
  const inspector = /^\/agents\/([^/]+)\/inspector(?:\/.*)?$/.exec(url.pathname);
  if (inspector) {
    return agents.getByName(decodeAgentId(inspector[1] ?? "")).fetch(request);
  }
  const match = /^\/agents\/([^/]+)(?:\/([^/]*))?$/.exec(url.pathname);
  const route = match ? ROUTES.get(match[2] ?? "") : undefined;
  if (!match || !route || match[2] === "") {
    throw new HttpError(
      404,
      `No route for ${request.method} ${url.pathname}. Endpoints: ${ENDPOINTS.join("; ")}`,
    );
  }
  if (method !== route.method) throw methodNotAllowed(route.method);
  const agent = decodeAgentId(match[1] ?? "");

  // Parse and check the body before touching the Durable Object.
  const body = route.method === "GET" ? undefined : await readJsonBody(request);
  const input =
    route.action === "history" ? checkHistoryQuery(url.searchParams) : checkInput(route.action, body);
  const stub = agents.getByName(agent);

  switch (route.action) {
    case "inspect":
      // The page is @contextblocks/inspector's, mounted in the agent's object behind INSPECTOR_TOKEN.
      return new Response(null, {
        status: 308,
        headers: { location: `/agents/${encodeURIComponent(agent)}/inspector/` },
      });
    case "prompt": {
      const prompt = await stub.prompt();
      return new Response(prompt, {
        headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
      });
    }
    case "blocks":
      return json(await stub.snapshot(agent));
    case "history":
      return json(refusedOr(await stub.blockVersions(input.label ?? "", input.limit ?? 20)));
    case "restore":
      return json(refusedOr(await stub.restoreBlock(input.label ?? "", input.version ?? 0)));
    case "chat":
      return json(
        turnOutcome(
          await stub.chat(agent, input.message ?? "", {
            ...(input.session !== undefined ? { sessionId: input.session } : {}),
          }),
        ),
      );
    case "edit":
      return json(
        turnOutcome(
          await stub.chat(agent, input.message ?? "", {
            ...(input.session !== undefined ? { sessionId: input.session } : {}),
            ...(input.messageId !== undefined ? { editOf: input.messageId } : {}),
          }),
        ),
      );
    case "sessions":
      return json(await stub.createSession(agent, input.name), 201);
    case "refresh":
      return json(await stub.refresh(agent));
    case "date":
      return json(await stub.setDate(agent, input.date ?? null));
  }
}

/** A turn's answer, or the Durable Object's refusal (an unknown conversation or message) as an HTTP error. */
function turnOutcome(outcome: ChatResult | Refusal): ChatResult {
  if (isRefusal(outcome)) throw new HttpError(outcome.refused.status, outcome.refused.error);
  return outcome;
}

/** A Durable Object's answer, or its refusal as an HTTP error. */
function refusedOr<T>(outcome: T | Refusal): T {
  if (isRefusal(outcome)) throw new HttpError(outcome.refused.status, outcome.refused.error);
  return outcome;
}

/** `?label=…&limit=…` of `GET /agents/:id/history`: a label, and a limit of 1 to 50 (default 20). */
function checkHistoryQuery(params: URLSearchParams): CheckedInput {
  const label = params.get("label");
  if (label === null || label.length === 0 || label.length > MAX_ID_LENGTH)
    throw new HttpError(400, 'Missing query parameter "label" (the block whose versions to list)');
  const limitText = params.get("limit") ?? "20";
  const limit = Number(limitText);
  if (!/^\d{1,2}$/.test(limitText) || limit < 1 || limit > 50)
    throw new HttpError(400, `Query parameter "limit" must be 1 to 50, got "${limitText}"`);
  return { label, limit };
}

interface CheckedInput {
  label?: string;
  limit?: number;
  version?: number;
  message?: string;
  session?: string;
  messageId?: string;
  name?: string;
  date?: string | null;
}

function checkInput(action: Action, body: unknown): CheckedInput {
  switch (action) {
    case "chat": {
      const fields = requireObject(body, "POST /agents/:id/chat");
      refuseUnknownFields(fields, ["message", "session"]);
      const session = optionalId(fields, "session");
      return { message: checkMessage(fields), ...(session !== undefined ? { session } : {}) };
    }
    case "edit": {
      const fields = requireObject(body, "POST /agents/:id/edit");
      refuseUnknownFields(fields, ["messageId", "message", "session"]);
      const messageId = optionalId(fields, "messageId");
      if (messageId === undefined)
        throw new HttpError(400, 'Missing field "messageId" (the id of the user message to edit)');
      const session = optionalId(fields, "session");
      return { messageId, message: checkMessage(fields), ...(session !== undefined ? { session } : {}) };
    }
    case "sessions": {
      if (body === undefined) return {};
      const fields = requireObject(body, "POST /agents/:id/sessions");
      refuseUnknownFields(fields, ["name"]);
      const name = fields.name;
      if (name === undefined) return {};
      if (typeof name !== "string")
        throw new HttpError(400, `Field "name" must be a string, got ${describe(name)}`);
      if (name.trim().length === 0) throw new HttpError(400, 'Field "name" is empty');
      if (name.length > MAX_SESSION_NAME_LENGTH) {
        throw new HttpError(
          400,
          `Field "name" is ${name.length} characters; the limit is ${MAX_SESSION_NAME_LENGTH}`,
        );
      }
      // The session registry refuses it (SQLite keeps UTF-8): say so here, not as the agent's failure.
      const lone = LONE_SURROGATE.exec(name);
      if (lone !== null)
        throw new HttpError(400, `Field "name" has a lone UTF-16 surrogate at index ${lone.index}`);
      return { name: name.trim() };
    }
    case "date": {
      const fields = requireObject(body, "PUT /agents/:id/date");
      refuseUnknownFields(fields, ["date"]);
      if (!("date" in fields))
        throw new HttpError(400, 'Missing field "date" ("YYYY-MM-DD", or null to clear)');
      const date = fields.date;
      if (date === null) return { date: null };
      if (typeof date !== "string") {
        throw new HttpError(400, `Field "date" must be a "YYYY-MM-DD" string or null, got ${describe(date)}`);
      }
      if (!isIsoDate(date))
        throw new HttpError(400, `Field "date" must be a real date written YYYY-MM-DD, got "${date}"`);
      return { date };
    }
    case "restore": {
      const fields = requireObject(body, "POST /agents/:id/restore");
      refuseUnknownFields(fields, ["label", "version"]);
      const label = optionalId(fields, "label");
      if (label === undefined) throw new HttpError(400, 'Missing field "label" (the block to restore)');
      const version = fields.version;
      if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1)
        throw new HttpError(400, `Field "version" must be a positive integer, got ${describe(version)}`);
      return { label, version };
    }
    case "refresh": {
      // No input; an empty body or {} is fine.
      if (body === undefined) return {};
      const fields = requireObject(body, "POST /agents/:id/refresh");
      if (Object.keys(fields).length > 0)
        throw new HttpError(400, "POST /agents/:id/refresh takes no fields");
      return {};
    }
    default:
      return {};
  }
}

/** The chat message: a non-empty string within the length limit. */
function checkMessage(fields: Record<string, unknown>): string {
  const message = fields.message;
  if (message === undefined) throw new HttpError(400, 'Missing field "message" (a string)');
  if (typeof message !== "string") {
    throw new HttpError(400, `Field "message" must be a string, got ${describe(message)}`);
  }
  if (message.trim().length === 0) throw new HttpError(400, 'Field "message" is empty');
  if (message.length > MAX_MESSAGE_LENGTH) {
    throw new HttpError(
      413,
      `Field "message" is ${message.length} characters; the limit is ${MAX_MESSAGE_LENGTH}`,
    );
  }
  return message;
}

/** An optional id field: absent, or a non-empty string of at most `MAX_ID_LENGTH` characters. */
function optionalId(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string")
    throw new HttpError(400, `Field "${name}" must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new HttpError(400, `Field "${name}" is empty`);
  if (value.length > MAX_ID_LENGTH)
    throw new HttpError(400, `Field "${name}" is ${value.length} characters; the limit is ${MAX_ID_LENGTH}`);
  return value;
}

function decodeAgentId(raw: string): string {
  let agent: string;
  try {
    agent = decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, "The agent id is not valid percent-encoding");
  }
  if (!AGENT_ID.test(agent)) {
    throw new HttpError(
      400,
      "An agent id is 1 to 64 letters, digits, '-' or '_', starting with a letter or digit",
    );
  }
  return agent;
}

function methodNotAllowed(allowed: string): HttpError {
  return new HttpError(405, `Use ${allowed} for this route`, {
    allow: allowed === "GET" ? "GET, HEAD" : allowed,
  });
}
