import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { Session, type SessionMessage } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { describe, expect, it } from "vitest";
import { createInspector, type InspectorOptions } from "../src/index.js";

function setup(options: Partial<InspectorOptions> = {}) {
  const store = new InMemoryStore();
  const context = new ContextBlocks(
    [
      { label: "memory", maxTokens: 2000, provider: new InMemoryContextProvider({ store }) },
      {
        label: "today",
        whenChanged: "remind",
        provider: new InMemoryContextProvider({ store }),
      },
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
  );
  const session = new Session({ store: inMemoryBackend().messages("chat"), context });
  const inspector = createInspector({ sessions: session, authorize: () => "read", ...options });
  return { context, session, inspector };
}

const text = (id: string, role: string, body: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

const utf8 = (value: string) => new TextEncoder().encode(value).byteLength;

/** Opens the event stream; nothing is read from it until `readUntil`. */
async function subscribe(inspector: (request: Request) => Promise<Response>) {
  const response = await inspector(new Request("http://agent.test/events"));
  expect(response.status).toBe(200);
  const body = response.body;
  if (body === null) throw new Error("no body");
  return body.getReader();
}

interface Received {
  text: string;
  bytes: number;
  events: Array<Record<string, unknown>>;
  /** Why the stream ended before `until` held, when it did. */
  error: unknown;
}

/** Reads until `until(text)` holds, the stream ends, or it fails (a subscriber disconnected). */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  until: (text: string) => boolean,
): Promise<Received> {
  const decoder = new TextDecoder();
  const received: Received = { text: "", bytes: 0, events: [], error: undefined };
  try {
    while (!until(received.text)) {
      const { done, value } = await reader.read();
      if (done) break;
      received.bytes += value.byteLength;
      received.text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    received.error = error;
  }
  for (const block of received.text.split("\n\n")) {
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (data !== undefined) received.events.push(JSON.parse(data) as Record<string, unknown>);
  }
  return received;
}

describe("the inspector's live events", () => {
  it("carry ids and sizes, never a message, a summary, a prompt or a reminder", async () => {
    const { context, session, inspector } = setup();
    const reader = await subscribe(inspector);
    const secret = (name: string) => `SECRET-${name}-${"x".repeat(40)}`;
    const first = text("m1", "user", secret("message"));
    await session.appendMessage(first);
    await session.appendMessage(text("m2", "assistant", "ok"));
    await session.updateMessage(text("m2", "assistant", secret("update")));
    await context.setBlock("today", "Monday");
    await session.context.freezeSystemPrompt();
    await context.setBlock("today", secret("reminder"));
    await context.reminder({ sending: true });
    await session.addCompaction(secret("summary"), "m1", "m2");
    await session.deleteMessages(["m2"]);

    const received = await readUntil(reader, (seen) => seen.includes('"messages-deleted"'));
    await reader.cancel();
    expect(received.text).not.toContain("SECRET");
    const byType = (type: string) => received.events.find((event) => event.type === type);

    const stored = (await session.store.getMessage("m1")) as SessionMessage;
    expect(byType("message-appended")).toEqual({
      type: "message-appended",
      sessionId: session.id,
      messageId: "m1",
      parentId: null,
      role: "user",
      createdAt: expect.any(String),
      imported: false,
      bytes: utf8(JSON.stringify(stored)),
    });
    expect(byType("message-updated")).toMatchObject({ messageId: "m2", role: "assistant" });
    expect(byType("message-updated")?.bytes).toBeGreaterThan(utf8(secret("update")));
    const [compaction] = await session.getCompactions();
    expect(byType("compaction-added")).toEqual({
      type: "compaction-added",
      sessionId: session.id,
      compactionId: compaction?.id,
      fromMessageId: "m1",
      toMessageId: "m2",
      createdAt: compaction?.createdAt,
      bytes: utf8(secret("summary")),
    });
    const prompt = await session.context.freezeSystemPrompt();
    expect(byType("prompt-frozen")).toMatchObject({ origin: "rendered", bytes: utf8(prompt) });
    expect(byType("prompt-frozen")?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(byType("reminder-sent")).toMatchObject({ labels: ["today"] });
    expect(byType("reminder-sent")?.bytes).toBeGreaterThan(utf8(secret("reminder")));
    expect(byType("block-written")).toMatchObject({ label: "today", action: "set" });
    expect(byType("messages-deleted")).toMatchObject({ messageIds: ["m2"] });
  });

  it("hold no bodies for a subscriber that stops reading: 120 appends of 256 KiB queue a few KiB", async () => {
    const { session, inspector } = setup();
    const reader = await subscribe(inspector);
    const body = "y".repeat(256 * 1024);
    for (let index = 0; index < 120; index++) {
      await session.appendMessage(text(`m${index}`, index % 2 === 0 ? "user" : "assistant", body));
    }
    const received = await readUntil(reader, (seen) => seen.includes('"messageId":"m119"'));
    await reader.cancel();
    expect(received.error).toBeUndefined();
    expect(received.events).toHaveLength(120);
    expect(received.bytes).toBeLessThan(64 * 1024);
  });

  it("disconnect a subscriber whose unread events pass eventBufferBytes, and unsubscribe it", async () => {
    const { session } = setup();
    let subscribed = 0;
    const inspector = createInspector({
      sessions: session,
      authorize: () => "read",
      eventBufferBytes: 4096,
      events: (listener) => {
        subscribed++;
        const stop = session.subscribe(listener);
        return () => {
          subscribed--;
          stop();
        };
      },
    });
    const reader = await subscribe(inspector);
    expect(subscribed).toBe(1);
    for (let index = 0; index < 100; index++) {
      await session.appendMessage(text(`m${index}`, "user", `message ${index}`));
    }
    const received = await readUntil(reader, (seen) => seen.includes('"messageId":"m99"'));
    expect(received.error).toBeDefined();
    expect(String(received.error)).toMatch(/eventBufferBytes/);
    // Disconnected, its queue dropped: nothing of what waited unread is still held for it.
    expect(received.bytes).toBe(0);
    expect(subscribed).toBe(0);

    // A subscriber that keeps reading is never disconnected, however many events pass.
    const reading = await subscribe(inspector);
    let total = 0;
    for (let index = 100; index < 400; index++) {
      await session.appendMessage(text(`m${index}`, "user", `message ${index}`));
      const { events } = await readUntil(reading, (seen) => seen.includes(`"messageId":"m${index}"`));
      total += events.length;
    }
    expect(total).toBe(300);
    await reading.cancel();
    expect(subscribed).toBe(0);
  });

  it("refuses an eventBufferBytes that is not a positive integer", () => {
    for (const eventBufferBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => createInspector({ authorize: () => "read", eventBufferBytes })).toThrow(
        /eventBufferBytes/,
      );
    }
  });
});
