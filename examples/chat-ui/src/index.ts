import { ChatRequestError, MAX_BODY_BYTES, readChatTurn } from "./chat-request.js";
import type { Env } from "./env.js";

export { ChatObject } from "./chat-object.js";

/** `/api/<user>/chats/<chat>`: ids of letters, digits, `-` and `_`, at most 64 characters. */
const CHAT_PATH = /^\/api\/([A-Za-z0-9_-]{1,64})\/chats\/([A-Za-z0-9_-]{1,64})$/;
/** How much of a body past the limit is read and dropped (so the client gets its 413) before the stream is cancelled. */
const MAX_DRAIN_BYTES = 32 * 1024 * 1024;

export default {
  async fetch(request, env): Promise<Response> {
    const match = CHAT_PATH.exec(new URL(request.url).pathname);
    if (match === null) return new Response("not found: use /api/<user>/chats/<chat>", { status: 404 });
    const [, user = "", chat = ""] = match;
    const chats = env.CHATS.getByName(user);
    if (request.method === "GET") return Response.json(await chats.messages(chat));
    if (request.method !== "POST")
      return new Response("use GET or POST", { status: 405, headers: { allow: "GET, POST" } });
    try {
      const turn = readChatTurn(parseJson(await readBody(request)));
      return await chats.chat(chat, turn);
    } catch (error) {
      if (error instanceof ChatRequestError) return new Response(error.message, { status: error.status });
      throw error;
    }
  },
} satisfies ExportedHandler<Env>;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ChatRequestError("the body is not JSON");
  }
}

/**
 * The body as text, counted in bytes as it arrives: one past `MAX_BODY_BYTES` (declared or streamed) is
 * refused with a 413 without being held in memory. The rest of it is read and dropped, up to a bound, rather
 * than cancelled at once: a proxy in front (wrangler dev) may otherwise reset the connection instead.
 */
async function readBody(request: Request): Promise<string> {
  const tooLarge = () => new ChatRequestError(`the body is over ${MAX_BODY_BYTES} bytes`, 413);
  if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total <= MAX_BODY_BYTES) chunks.push(value);
    else if (total > MAX_DRAIN_BYTES) {
      await reader.cancel();
      break;
    }
  }
  if (total > MAX_BODY_BYTES) throw tooLarge();
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
