import { DurableObject } from "cloudflare:workers";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { contextPipeline } from "@contextblocks/ai";
import { type Session, SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { type SqliteBackend, sqliteBackend } from "@contextblocks/sqlite";
import { stepCountIs, streamText } from "ai";
import type { ChatTurn } from "./chat-request.js";
import { echoModel } from "./echo-model.js";
import type { Env } from "./env.js";

const SOUL =
  "You are a helpful assistant. Keep what the user tells you about themselves in your memory block.";

/**
 * One user's chats: each chat is a session in this object's SQLite storage, with its own memory block and
 * frozen prompt. A turn streams through `contextPipeline({ model, session })`, which loads the stored
 * history, stores the new message and the answer, and keeps the prompt's cached prefix stable.
 */
export class ChatObject extends DurableObject<Env> {
  #backend: SqliteBackend | undefined;

  /** Streams the answer to `turn` in chat `chatId` as a UI message stream (what useChat reads). */
  async chat(chatId: string, turn: ChatTurn): Promise<Response> {
    const session = this.#session(chatId);
    let text = turn.text;
    let parentId: string | null | undefined;
    if (turn.trigger === "regenerate-message") {
      // A new answer to the stored question, on a new branch beside the old one (under the same parent).
      const question = await lastQuestion(session);
      if (question === null) return new Response("there is no question to answer again", { status: 409 });
      text = question.text;
      parentId = question.parentId;
    }
    const pipeline = contextPipeline({ model: this.#model(), session });
    const result = streamText({
      model: pipeline.model,
      tools: pipeline.tools,
      messages: [{ role: "user", content: text }],
      stopWhen: stepCountIs(5),
      ...(parentId === undefined ? {} : { providerOptions: { contextblocks: { parentId } } }),
    });
    return result.toUIMessageStreamResponse();
  }

  /** The chat as stored, on its current branch (useChat's initial `messages`). */
  async messages(chatId: string): Promise<SessionMessage[]> {
    return this.#session(chatId).getHistory();
  }

  #session(chatId: string): Session {
    this.#backend ??= sqliteBackend(this.ctx.storage);
    return new SessionBuilder(this.#backend)
      .forSession(chatId)
      .withContext("soul", { provider: { get: async () => SOUL } })
      .withContext("memory", { description: "Facts about the user", maxTokens: 500 })
      .withCachedPrompt()
      .build();
  }

  #model(): LanguageModelV4 {
    const apiKey = this.env.OPENAI_API_KEY;
    return apiKey ? createOpenAI({ apiKey })(this.env.OPENAI_MODEL) : echoModel();
  }
}

/** The newest user message on the chat's current branch: its text and the message it follows. */
async function lastQuestion(session: Session): Promise<{ text: string; parentId: string | null } | null> {
  const path = await session.store.getHistory();
  const question = path.findLast((message) => message.role === "user");
  if (question === undefined) return null;
  const node = await session.store.getNode(question.id);
  const text = question.parts.flatMap((part) => (part.type === "text" ? [String(part.text)] : [])).join("\n");
  return { text, parentId: node?.parentId ?? null };
}
