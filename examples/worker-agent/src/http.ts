/** Largest request body the Worker reads, in bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A request the Worker refuses, with the status and the message sent back as `{ error }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(`${JSON.stringify(body, null, 2)}\n`, {
    status,
    headers: { ...JSON_HEADERS, ...headers },
  });
}

export function errorResponse(error: HttpError): Response {
  return json({ error: error.message }, error.status, error.headers);
}

/**
 * The request body parsed as JSON, or `undefined` when there is none. Refuses bodies over
 * `MAX_BODY_BYTES` (keeping no more than the limit: the rest is read and dropped, see `drain`), bodies that
 * are not `application/json`, and malformed JSON.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await readLimited(request);
  if (bytes.length === 0) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(
      415,
      `Send the body as JSON with "content-type: application/json" (got "${type || "none"}")`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new HttpError(400, "The body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `Malformed JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function readLimited(request: Request): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      // Read the rest and drop it rather than cancel the stream: under `wrangler dev` a cancelled request
      // body left the proxy in front of workerd with a half-sent request, so the client got a connection
      // reset instead of this 413 and the next request (to any agent) a 503 "worker restarted mid-request".
      await drain(reader, total);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** How much of an over-limit body is read and dropped so the client gets its 413; past that, the stream is cancelled. */
export const MAX_DRAIN_BYTES = 32 * 1024 * 1024;

/** Reads the body to its end without keeping it, up to `MAX_DRAIN_BYTES` in all. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, alreadyRead: number): Promise<void> {
  let total = alreadyRead;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    total += value.byteLength;
    if (total > MAX_DRAIN_BYTES) {
      await reader.cancel();
      return;
    }
  }
}

function tooLarge(): HttpError {
  return new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);
}

/** The body as a JSON object (not an array, not null), or an error naming what arrived. */
export function requireObject(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined) throw new HttpError(400, `${what} needs a JSON object body`);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, `${what} needs a JSON object body, got ${describe(body)}`);
  }
  return body as Record<string, unknown>;
}

/** Refuses fields the endpoint does not know, so a typo is an error rather than silently ignored. */
export function refuseUnknownFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new HttpError(
      400,
      `Unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => JSON.stringify(key)).join(", ")}; expected ${allowed.map((key) => JSON.stringify(key)).join(", ")}`,
    );
  }
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
