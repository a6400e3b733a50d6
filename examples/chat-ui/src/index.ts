import { ChatRequestError, readChatTurn } from "./chat-request.js";
import type { Env } from "./env.js";

export { ChatObject } from "./chat-object.js";

/** `/api/<user>/chats/<chat>`: ids of letters, digits, `-` and `_`, at most 64 characters. */
const CHAT_PATH = /^\/api\/([A-Za-z0-9_-]{1,64})\/chats\/([A-Za-z0-9_-]{1,64})$/;
/** The largest request body read, in bytes (useChat sends the whole history with each message). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export default {
  async fetch(request, env): Promise<Response> {
    const match = CHAT_PATH.exec(new URL(request.url).pathname);
    if (match === null) return new Response("not found: use /api/<user>/chats/<chat>", { status: 404 });
    const [, user = "", chat = ""] = match;
    const chats = env.CHATS.getByName(user);
    if (request.method === "GET") return Response.json(await chats.messages(chat));
    if (request.method !== "POST") return new Response("use GET or POST", { status: 405 });
    try {
      const body = await request.text();
      if (body.length > MAX_BODY_BYTES)
        throw new ChatRequestError(`the body is over ${MAX_BODY_BYTES} bytes`);
      const turn = readChatTurn(parseJson(body));
      return await chats.chat(chat, turn);
    } catch (error) {
      if (error instanceof ChatRequestError) return new Response(error.message, { status: 400 });
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
