import { contextTools } from "@contextblocks/ai";
import { ContextBlocks, isContextError } from "@contextblocks/core";
import { Session, type SessionMessage } from "@contextblocks/sessions";
import { AGENTS_MESSAGES_TABLE } from "@contextblocks/test-kit/postgres";
import { convertToModelMessages, generateText, stepCountIs, type UIMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresContextProvider, PostgresSessionStore } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function text(id: string, content: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text: content }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

describe("Session on PostgresSessionStore", () => {
  it("drives a generateText turn with a tool call; the stored turn reads back after a restart", async () => {
    const open = async () => {
      const client = await schema.client();
      return new Session({
        store: new PostgresSessionStore(client, "chat-1"),
        context: new ContextBlocks([
          {
            label: "memory",
            description: "Facts",
            maxTokens: 100,
            provider: new PostgresContextProvider(client, "memory_chat-1"),
          },
        ]),
      });
    };
    const session = await open();
    const steps = [
      {
        content: [
          {
            type: "tool-call" as const,
            toolCallId: "call-1",
            toolName: "set_context",
            input: JSON.stringify({ label: "memory", content: "User likes tea." }),
          },
        ],
        finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text" as const, text: "Noted: tea." }],
        finishReason: { unified: "stop" as const, raw: "stop" },
        usage,
        warnings: [],
      },
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const step = steps.shift();
        if (step === undefined) throw new Error("the scripted model ran out of steps");
        return step;
      },
    });
    await session.appendMessage(text("u1", "Remember that I like tea."));
    await session.context.load();
    const result = await generateText({
      model,
      system: await session.context.freezeSystemPrompt(),
      messages: await convertToModelMessages((await session.getHistory()) as UIMessage[]),
      tools: contextTools(session.context),
      stopWhen: stepCountIs(4),
    });
    expect(result.text).toBe("Noted: tea.");
    const call = result.steps[0]?.toolResults[0];
    expect(call?.toolName).toBe("set_context");
    await session.appendMessage({
      id: "a1",
      role: "assistant",
      parts: [
        {
          type: "tool-set_context",
          toolCallId: String(call?.toolCallId),
          state: "output-available",
          input: call?.input,
          output: call?.output,
        },
        { type: "text", text: result.text },
      ],
    });

    // A restart: a new connection, provider and session read the same rows.
    const restarted = await open();
    const history = await restarted.getHistory();
    expect(ids(history)).toEqual(["u1", "a1"]);
    const tool = history[1]?.parts[0];
    expect(tool?.toolCallId).toBe("call-1");
    expect(tool?.input).toEqual({ label: "memory", content: "User likes tea." });
    expect(tool?.output).toEqual(call?.output);
    expect(await restarted.context.freezeSystemPrompt()).toContain("User likes tea.");
    // The reloaded history is a valid AI SDK prompt, tool call and result included.
    const replay = await convertToModelMessages(history as UIMessage[]);
    expect(replay.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(JSON.stringify(replay[2])).toContain("call-1");
    expect((await restarted.search("what does the user like?")).map((hit) => hit.id)).toContain("u1");
  });
});

describe("PostgresSessionStore", () => {
  it("appends racing from two connections chain into one path; none forks or is lost", async () => {
    const one = postgresTree(await schema.client(), "race");
    const two = postgresTree(await schema.client(), "race");
    const appended = Array.from({ length: 20 }, (_, index) => `m${index}`);
    await Promise.all(
      appended.map((id, index) => (index % 2 === 0 ? one : two).appendMessage(text(id, `text ${id}`))),
    );
    const history = await one.getHistory();
    expect(ids(history).sort()).toEqual([...appended].sort());
    expect(await two.getPathLength()).toBe(20);
    for (const message of history.slice(0, -1)) expect(await one.getBranches(message.id)).toHaveLength(1);
  });

  it("reads and extends a session table as Cloudflare agents' Sessions API creates it (no position or leaf pointer)", async () => {
    const client = await schema.client();
    await client.query(AGENTS_MESSAGES_TABLE);
    for (const [id, parent] of [
      ["a", null],
      ["b", "a"],
      ["c", "b"],
    ] as const) {
      await client.query(
        "INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content) VALUES ($1, 's', $2, 'user', $3, $4)",
        [id, parent, JSON.stringify(text(id, `old ${id}`)), `old ${id}`],
      );
    }
    const provider = postgresTree(client, "s");
    expect(ids(await provider.getHistory())).toEqual(["a", "b", "c"]);
    expect(await provider.getPathLength()).toBe(3);
    await provider.appendMessage(text("d", "new"));
    expect(ids(await provider.getHistory())).toEqual(["a", "b", "c", "d"]);
    expect(await provider.getPathLength()).toBe(4);
    // agents' rows are read as they are, and the new one chains under their leaf.
    const { rows } = await client.query("SELECT id, parent_id FROM assistant_messages ORDER BY id");
    expect(rows).toEqual([
      { id: "a", parent_id: null },
      { id: "b", parent_id: "a" },
      { id: "c", parent_id: "b" },
      { id: "d", parent_id: "c" },
    ]);
  });

  it("with createTables: false and no tables, says to run schema.sql and creates nothing", async () => {
    const client = await schema.client();
    const provider = postgresTree(client, { sessionId: "s", createTables: false });
    for (const call of [() => provider.getHistory(), () => provider.appendMessage(text("a", "x"))]) {
      const error = await call().then(
        () => null,
        (reason: unknown) => reason,
      );
      expect(isContextError(error) && error.code).toBe("PROVIDER_FAILED");
      expect(String((error as Error).message)).toContain("schema.sql");
    }
    const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1", [
      schema.name,
    ]);
    expect(rows[0]).toEqual({ n: 0 });
  });

  it("stores text with NUL exactly and finds it; refuses a NUL in the role or session id by name", async () => {
    const store = new PostgresSessionStore(await schema.client(), "nul");
    const provider = postgresTree(store.client, "nul");
    await provider.appendMessage(text("a", "zebra\u0000crossing \ud800 alone"));
    expect((await provider.getMessage("a"))?.parts[0]?.text).toBe("zebra\u0000crossing \ud800 alone");
    expect(ids(await provider.searchMessages("alone"))).toEqual(["a"]);
    await expect(provider.appendMessage(text("b", "x", "us\u0000er"))).rejects.toThrow(/role has a NUL/);
    expect(() => new PostgresSessionStore(store.client, "bad\u0000id")).toThrow(/session id has a NUL/);
    expect(await provider.getMessage("a\u0000")).toBeNull();
    expect(ids(await provider.getHistory())).toEqual(["a"]);
  });

  it("getRecentHistory reads only the window that fits, and says when older messages exist", async () => {
    const provider = postgresTree(await schema.client(), "recent");
    for (let index = 0; index < 10; index++) await provider.appendMessage(text(`m${index}`, "x".repeat(100)));
    const size = JSON.stringify(text("m0", "x".repeat(100))).length;
    const window = await provider.getRecentHistory(null, size * 3, 1);
    expect(ids(window.messages)).toEqual(["m7", "m8", "m9"]);
    expect(window.truncated).toBe(true);
    expect(window.totalContentBytes).toBe(size * 3);
    const all = await provider.getRecentHistory(null, size * 100, 1);
    expect(all.messages).toHaveLength(10);
    expect(all.truncated).toBe(false);
  });

  it("deleting the latest leaf moves the pointer to the newest childless message", async () => {
    const provider = postgresTree(await schema.client(), "delete");
    for (const id of ["a", "b", "c"]) await provider.appendMessage(text(id, id));
    await provider.appendMessage(text("x", "branch"), "a");
    await provider.deleteMessages(["x"]);
    expect((await provider.getLatestLeaf())?.id).toBe("c");
    await provider.appendMessage(text("d", "next"));
    expect(ids(await provider.getHistory())).toEqual(["a", "b", "c", "d"]);
  });
});
