import { describe, expect, it } from "vitest";
import {
  SessionBuilder,
  SessionManager,
  type SessionManagerEvent,
  type SessionMessage,
} from "../src/index.js";
import { inMemoryBackend } from "../src/memory/index.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

describe("SessionManager.subscribe", () => {
  it("hears sessions created and deleted, and each session's events with its id", async () => {
    const manager = new SessionManager(
      new SessionBuilder(inMemoryBackend()).withContext("memory", { maxTokens: 200 }).withCachedPrompt(),
    );
    const heard: SessionManagerEvent[] = [];
    const stop = manager.subscribe((event) => heard.push(event));
    manager.subscribe(() => {
      throw new Error("a failing listener never fails the operation");
    });
    const chat = await manager.create("Chat");
    const child = await manager.create("Child", { parentSessionId: chat.id });
    const session = manager.getSession(chat.id);
    await session.context.setBlock("memory", "likes tea");
    const prompt = await session.context.freezeSystemPrompt();
    await manager.getSession(chat.id).appendMessage(message("u1", "hello"));
    await manager.delete(child.id);
    expect(heard).toEqual([
      { type: "session-created", sessionId: chat.id, name: "Chat", parentSessionId: null },
      { type: "session-created", sessionId: child.id, name: "Child", parentSessionId: chat.id },
      {
        type: "block-written",
        label: "memory",
        action: "set",
        source: { kind: "api", name: "setBlock" },
        sessionId: chat.id,
      },
      {
        type: "prompt-frozen",
        prompt,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        origin: "rendered",
        sessionId: chat.id,
      },
      {
        type: "message-appended",
        sessionId: chat.id,
        messageId: "u1",
        parentId: null,
        role: "user",
        message: message("u1", "hello"),
        createdAt: expect.any(String),
        imported: false,
      },
      { type: "session-deleted", sessionId: child.id },
    ]);
    stop();
    await manager.create("Unheard");
    expect(heard).toHaveLength(6);
  });
});
