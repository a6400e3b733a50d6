import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import type { CacheHintOptions } from "../../src/pipeline/cache-hints.js";
import { anthropicAnswer, findKey, openaiAnswer, recordingFetch } from "./provider-requests.js";

/**
 * The cache hints as the real provider packages send them (`@ai-sdk/anthropic` and `@ai-sdk/openai`: 3 under
 * ai 6 here, 4 under ai 7 in test-ai7), read from the HTTP body a `fetch` stub records.
 */
function chatSession(): Session {
  return new SessionBuilder(inMemoryBackend())
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are a friendly assistant." } })
    .withContext("memory", { description: "Facts about the user", maxTokens: 400 })
    .build();
}

/** Two turns through the session pipeline; the request bodies of both. */
async function twoTurns(
  model: Parameters<typeof contextPipeline>[0]["model"],
  cacheHints: CacheHintOptions = {},
) {
  const session = chatSession();
  const pipeline = contextPipeline({ model, session, cacheHints });
  await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello." });
  await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "And again." });
}

describe("Anthropic's request body (@ai-sdk/anthropic)", () => {
  const anthropic = () => recordingFetch(() => anthropicAnswer("Hi.", { read: 0, write: 100 }));

  it("carries a breakpoint on the frozen prompt and one on the latest stable message, 5m by default", async () => {
    const recorded = anthropic();
    await twoTurns(createAnthropic({ apiKey: "test", fetch: recorded.fetch })("claude-sonnet-4-5"));
    const body = recorded.bodies[1]!;
    const messages = body.messages as Array<{ content: unknown[] }>;
    const last = messages.length - 1;
    expect(findKey(body, "cache_control")).toEqual([
      ["system.0", { type: "ephemeral" }],
      [`messages.${last}.content.${messages[last]!.content.length - 1}`, { type: "ephemeral" }],
    ]);
    // Turn 2 repeats turn 1's history: the system text is byte for byte the same.
    expect(JSON.stringify(body.system)).toBe(JSON.stringify(recorded.bodies[0]!.system));
  });

  it("sends ttl 1h on both breakpoints when asked", async () => {
    const recorded = anthropic();
    await twoTurns(createAnthropic({ apiKey: "test", fetch: recorded.fetch })("claude-sonnet-4-5"), {
      ttl: "1h",
    });
    const marks = findKey(recorded.bodies[1], "cache_control").map(([, value]) => value);
    expect(marks).toEqual([
      { type: "ephemeral", ttl: "1h" },
      { type: "ephemeral", ttl: "1h" },
    ]);
  });

  it("with automatic caching: the frozen prompt's breakpoint and one top-level cache_control, none on messages", async () => {
    const recorded = anthropic();
    await twoTurns(createAnthropic({ apiKey: "test", fetch: recorded.fetch })("claude-sonnet-4-5"), {
      anthropic: "automatic",
    });
    for (const body of recorded.bodies) {
      expect(findKey(body, "cache_control")).toEqual([
        ["", { type: "ephemeral" }],
        ["system.0", { type: "ephemeral" }],
      ]);
    }
  });

  it("keeps longer TTLs first: the automatic breakpoint after a caller's 5m one is 5m, the prompt's 1h", async () => {
    const recorded = anthropic();
    const session = chatSession();
    const model = createAnthropic({ apiKey: "test", fetch: recorded.fetch })("claude-sonnet-4-5");
    const pipeline = contextPipeline({ model, session, cacheHints: { anthropic: "automatic", ttl: "1h" } });
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      messages: [
        {
          role: "user",
          content: "Hello.",
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
        },
      ],
    });
    const body = recorded.bodies[0]!;
    expect(body.cache_control).toEqual({ type: "ephemeral" });
    expect(findKey(body, "cache_control")).toEqual([
      ["", { type: "ephemeral" }],
      ["system.0", { type: "ephemeral", ttl: "1h" }],
      ["messages.0.content.0", { type: "ephemeral" }],
    ]);
  });
});

describe("OpenAI's request body (@ai-sdk/openai)", () => {
  const openai = () =>
    recordingFetch((body) => openaiAnswer("Hi.", String(body.model), { read: 0, write: 0 }));

  it("GPT-5.6 (Responses API): explicit breakpoints where Anthropic's go, the same key on every call", async () => {
    const recorded = openai();
    await twoTurns(createOpenAI({ apiKey: "test", fetch: recorded.fetch })("gpt-5.6-terra"), {
      openaiTtl: "30m",
    });
    const [first, second] = recorded.bodies as Array<Record<string, unknown>>;
    const input = second!.input as Array<{ role: string; content: unknown[] }>;
    const last = input.length - 1;
    expect(input[0]!.role).toBe("developer");
    expect(findKey(second, "prompt_cache_breakpoint")).toEqual([
      ["input.0.content.0", { mode: "explicit" }],
      [`input.${last}.content.${input[last]!.content.length - 1}`, { mode: "explicit" }],
    ]);
    expect(second!.prompt_cache_key).toMatch(/^contextblocks-[0-9a-f]{32}$/);
    expect(second!.prompt_cache_key).toBe(first!.prompt_cache_key);
    expect(String(second!.prompt_cache_key)).not.toContain("chat-1");
    expect(second!.prompt_cache_options).toEqual({ ttl: "30m" });
  });

  it("GPT-5.6 (Chat Completions): the breakpoint on the system message's text", async () => {
    const recorded = recordingFetch((body) => ({
      id: "chat_1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: "Hi." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 200, completion_tokens: 3, total_tokens: 203 },
    }));
    await twoTurns(createOpenAI({ apiKey: "test", fetch: recorded.fetch }).chat("gpt-5.6-terra"));
    const paths = findKey(recorded.bodies[1], "prompt_cache_breakpoint").map(([path]) => path);
    expect(paths[0]).toBe("messages.0.content.0");
    expect(paths).toHaveLength(2);
    expect(recorded.bodies[1]!.prompt_cache_key).toMatch(/^contextblocks-[0-9a-f]{32}$/);
  });

  it("an older model gets the key alone: no breakpoint, no promptCacheOptions", async () => {
    const recorded = openai();
    await twoTurns(createOpenAI({ apiKey: "test", fetch: recorded.fetch })("gpt-4.1-mini"), {
      openaiTtl: "30m",
    });
    for (const body of recorded.bodies) {
      expect(findKey(body, "prompt_cache_breakpoint")).toEqual([]);
      expect(body.prompt_cache_options).toBeUndefined();
      expect(body.prompt_cache_key).toMatch(/^contextblocks-[0-9a-f]{32}$/);
    }
  });

  it("openaiBreakpoints: false keeps the key and places no breakpoint", async () => {
    const recorded = openai();
    await twoTurns(createOpenAI({ apiKey: "test", fetch: recorded.fetch })("gpt-5.6-terra"), {
      openaiBreakpoints: false,
    });
    expect(findKey(recorded.bodies[1], "prompt_cache_breakpoint")).toEqual([]);
    expect(recorded.bodies[1]!.prompt_cache_key).toMatch(/^contextblocks-/);
  });
});
