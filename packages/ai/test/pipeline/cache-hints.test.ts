import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, type JSONValue, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import {
  contextPipeline,
  InMemoryHistoryPlugin,
  isReminderPart,
  promptCacheKey,
  type RunMessage,
} from "../../src/index.js";
import type { CacheHintOptions } from "../../src/pipeline/cache-hints.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  scriptedModel,
  scriptedStreamModel,
} from "../helpers.js";
import { breakpointTtls } from "./helpers.js";

const EPHEMERAL = { anthropic: { cacheControl: { type: "ephemeral" } } };
const CACHE_POINT = { bedrock: { cachePoint: { type: "default" } } };

/** Plays `turns` user messages through a pipeline with history (one model call per turn, two for `tool`). */
async function play(
  turns: string[],
  options: { cacheHints?: boolean | CacheHintOptions; stream?: boolean; changeDayBefore?: number } = {},
) {
  const store = createStore();
  let day = "Monday";
  const context = createContext(store, [], { today: () => day });
  const steps = turns.flatMap((text, index) =>
    text.includes("remember")
      ? [
          callTools(index, { toolName: "set_context", input: { label: "memory", content: text } }),
          answer("Noted."),
        ]
      : [answer(`Reply ${index}.`)],
  );
  const model = options.stream ? scriptedStreamModel(steps) : scriptedModel(steps);
  const pipeline = contextPipeline({
    model,
    context,
    plugins: [new InMemoryHistoryPlugin("history")],
    ...(options.cacheHints === undefined ? {} : { cacheHints: options.cacheHints }),
  });
  const texts: string[] = [];
  for (const [index, text] of turns.entries()) {
    if (index === options.changeDayBefore) day = "Tuesday";
    const call = { model: pipeline.model, tools: pipeline.tools, prompt: text, stopWhen: stepCountIs(3) };
    if (options.stream) {
      const result = streamText(call);
      texts.push(await result.text);
    } else {
      texts.push((await generateText(call)).text);
    }
  }
  return { calls: model.doGenerateCalls.length > 0 ? model.doGenerateCalls : model.doStreamCalls, texts };
}

/** Indexes of messages that carry an option under `namespace` (on the message or one of its parts). */
function markedIndexes(call: LanguageModelV3CallOptions, namespace: "anthropic" | "bedrock"): number[] {
  return call.prompt.flatMap((message, index) => {
    const onMessage = message.providerOptions?.[namespace] !== undefined;
    const onPart =
      Array.isArray(message.content) &&
      message.content.some((part) => part.providerOptions?.[namespace] !== undefined);
    return onMessage || onPart ? [index] : [];
  });
}

function reminderIndex(call: LanguageModelV3CallOptions): number {
  return call.prompt.findIndex(
    (message) => Array.isArray(message.content) && message.content.some((part) => isReminderPart(part)),
  );
}

/** The call without any provider options: what the model reads. */
function withoutOptions(call: LanguageModelV3CallOptions): unknown {
  return JSON.parse(
    JSON.stringify({ prompt: call.prompt, tools: call.tools }, (key, value) =>
      key === "providerOptions" && (value?.anthropic || value?.bedrock) ? stripped(value) : value,
    ),
  );
}

function stripped(options: Record<string, unknown>): Record<string, unknown> | undefined {
  const { anthropic: _a, bedrock: _b, ...rest } = options;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

const TURNS = ["Hello", "Please remember I like tea", "What do I like?", "Thanks", "And now?"];

describe("cache hints (contextMiddleware / contextPipeline)", () => {
  it("marks the frozen prompt and the latest message on every call, and keys OpenAI's cache by session", async () => {
    const { calls } = await play(TURNS);
    expect(calls).toHaveLength(6);
    const key = await promptCacheKey("default");
    expect(key).toMatch(/^contextblocks-[0-9a-f]{32}$/);
    for (const call of calls) {
      expect(call.prompt[0]?.role).toBe("system");
      expect(call.prompt[0]?.providerOptions).toEqual({ ...EPHEMERAL, ...CACHE_POINT });
      const last = call.prompt.length - 1;
      expect(markedIndexes(call, "anthropic")).toEqual([0, last]);
      expect(markedIndexes(call, "bedrock")).toEqual([0, last]);
      expect(call.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    }
  });

  it("keeps the same promptCacheKey after a restart, and a different one per session", async () => {
    const first = await play(["Hello"]);
    const restarted = await play(["Hello again"]);
    const key = first.calls[0]?.providerOptions?.openai?.promptCacheKey;
    expect(restarted.calls[0]?.providerOptions?.openai?.promptCacheKey).toBe(key);
    expect(await promptCacheKey("another session")).not.toBe(key);
  });

  it("never marks the message carrying the reminder or anything after it", async () => {
    const { calls } = await play(TURNS, { changeDayBefore: 2 });
    const withReminder = calls.filter((call) => reminderIndex(call) > 0);
    // Turns 3, 4 and 5 (the tool turn's two steps come before the change): the reminder repeats until a refresh.
    expect(withReminder).toHaveLength(3);
    for (const call of withReminder) {
      const reminder = reminderIndex(call);
      expect(markedIndexes(call, "anthropic")).toEqual([0, reminder - 1]);
      expect(markedIndexes(call, "bedrock")).toEqual([0, reminder - 1]);
    }
  });

  it("never changes a byte of what the model reads, and a provider that ignores them answers the same", async () => {
    const hinted = await play(TURNS, { changeDayBefore: 3 });
    const plain = await play(TURNS, { changeDayBefore: 3, cacheHints: false });
    expect(hinted.texts).toEqual(plain.texts);
    expect(hinted.calls).toHaveLength(plain.calls.length);
    hinted.calls.forEach((call, index) => {
      expect(withoutOptions(call)).toEqual(withoutOptions(plain.calls[index]!));
    });
    for (const call of plain.calls) {
      expect(markedIndexes(call, "anthropic")).toEqual([]);
      expect(call.providerOptions).toBeUndefined();
    }
  });

  it("carries them on streamText calls too", async () => {
    const { calls, texts } = await play(["Hello", "Please remember I like tea"], { stream: true });
    expect(texts).toEqual(["Reply 0.", "Noted."]);
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(markedIndexes(call, "anthropic")).toEqual([0, call.prompt.length - 1]);
      expect(call.providerOptions?.openai?.promptCacheKey).toBe(await promptCacheKey("default"));
    }
  });

  it("tunes: the 1-hour TTL, the frozen prompt only, one provider off, a key of your own", async () => {
    const { calls } = await play(["Hello", "Again"], {
      cacheHints: { ttl: "1h", conversation: false, bedrock: false, openai: (id) => `tenant-a:${id}` },
    });
    for (const call of calls) {
      expect(call.prompt[0]?.providerOptions).toEqual({
        anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } },
      });
      expect(markedIndexes(call, "anthropic")).toEqual([0]);
      expect(markedIndexes(call, "bedrock")).toEqual([]);
      expect(call.providerOptions).toEqual({ openai: { promptCacheKey: "tenant-a:default" } });
    }
  });

  it("keeps the caller's options and stays within four breakpoints", async () => {
    const store = createStore();
    const model = scriptedModel([answer("ok")]);
    const pipeline = contextPipeline({ model, context: createContext(store) });
    const marked = (text: string): RunMessage =>
      ({
        role: "user",
        content: [{ type: "text", text }],
        providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
      }) as RunMessage;
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      messages: [
        marked("one"),
        { role: "assistant", content: "a" },
        marked("two"),
        { role: "assistant", content: "b" },
        marked("three"),
      ],
      providerOptions: { openai: { promptCacheKey: "mine", user: "u1" } },
    });
    const call = model.doGenerateCalls[0]!;
    const anthropicMarks = call.prompt.filter((message) => message.providerOptions?.anthropic !== undefined);
    expect(anthropicMarks).toHaveLength(4);
    expect(call.prompt[0]?.providerOptions?.anthropic).toEqual(EPHEMERAL.anthropic);
    // The conversation's breakpoint would land on "three", which the caller marked already.
    expect(markedIndexes(call, "bedrock")).toEqual([0, call.prompt.length - 1]);
    expect(call.providerOptions).toEqual({ openai: { promptCacheKey: "mine", user: "u1" } });
  });

  it("carries them on the session path: contextPipeline({ model, session }), keyed by the session id", async () => {
    const backend = inMemoryBackend();
    const open = (id: string) =>
      new SessionBuilder(backend)
        .forSession(id)
        .withContext("memory", { description: "Facts about the user", maxTokens: 400 })
        .withCachedPrompt()
        .build();
    const model = scriptedModel([answer("Hi."), answer("Still here."), answer("Hello.")]);
    const first = contextPipeline({ model, session: open("chat-1") });
    await generateText({ model: first.model, tools: first.tools, prompt: "Hello" });
    await generateText({ model: first.model, tools: first.tools, prompt: "Again" });
    // A restart: a new Session object and a new pipeline over the same storage.
    const restarted = contextPipeline({ model, session: open("chat-1") });
    await generateText({ model: restarted.model, tools: restarted.tools, prompt: "Back" });
    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(3);
    const key = await promptCacheKey("chat-1");
    expect(key).not.toBe(await promptCacheKey("default"));
    for (const call of calls) {
      expect(call.prompt[0]?.role).toBe("system");
      expect(call.prompt[0]?.providerOptions).toEqual({ ...EPHEMERAL, ...CACHE_POINT });
      expect(markedIndexes(call, "anthropic")).toEqual([0, call.prompt.length - 1]);
      expect(call.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    }
    // The history the session stored comes back without the hints (they are not part of the conversation).
    expect(calls[2]!.prompt.length).toBeGreaterThan(calls[0]!.prompt.length);
    const middle = calls[2]!.prompt.slice(1, -1);
    for (const message of middle) expect(message.providerOptions?.anthropic).toBeUndefined();
  });
});

describe("cache hints count every breakpoint the caller placed, and keep longer TTLs first", () => {
  const ONE_HOUR = { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } };

  /** One `generateText` call through a pipeline; what the model received. */
  async function send(
    request: {
      messages: RunMessage[];
      toolOptions?: Record<string, Record<string, JSONValue>>;
      providerOptions?: Record<string, Record<string, JSONValue>>;
    },
    cacheHints?: CacheHintOptions,
  ): Promise<LanguageModelV3CallOptions> {
    const model = scriptedModel([answer("ok")]);
    const pipeline = contextPipeline({
      model,
      context: createContext(createStore()),
      ...(cacheHints ? { cacheHints } : {}),
    });
    const lookup = tool({
      description: "Looks a city up",
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => "42",
      ...(request.toolOptions ? { providerOptions: request.toolOptions } : {}),
    });
    await generateText({
      model: pipeline.model,
      tools: { ...pipeline.tools, lookup },
      messages: request.messages,
      ...(request.providerOptions ? { providerOptions: request.providerOptions } : {}),
    });
    return model.doGenerateCalls[0]!;
  }

  const text = (role: "user" | "assistant", words: string, providerOptions?: object): RunMessage =>
    ({
      role,
      content: [{ type: "text", text: words }],
      ...(providerOptions ? { providerOptions } : {}),
    }) as RunMessage;

  it("a tool breakpoint and two on messages leave room for one hint, on the frozen prompt", async () => {
    const call = await send({
      toolOptions: EPHEMERAL,
      messages: [
        text("user", "one", EPHEMERAL),
        text("assistant", "a"),
        text("user", "two", EPHEMERAL),
        text("assistant", "b"),
        text("user", "three"),
      ],
    });
    expect(call.tools?.find((definition) => definition.name === "lookup")).toMatchObject({
      providerOptions: EPHEMERAL,
    });
    expect(breakpointTtls(call, "anthropic")).toHaveLength(4);
    expect(call.prompt[0]?.providerOptions?.anthropic).toEqual(EPHEMERAL.anthropic);
    expect(call.prompt.at(-1)?.providerOptions?.anthropic).toBeUndefined();
    // Bedrock reads no breakpoint from tool definitions: both of its hints still fit.
    expect(markedIndexes(call, "bedrock")).toEqual([0, call.prompt.length - 1]);
  });

  it("Anthropic's top-level automatic caching takes a slot: three marked messages leave none", async () => {
    const call = await send({
      providerOptions: EPHEMERAL,
      messages: [
        text("user", "one", EPHEMERAL),
        text("assistant", "a", EPHEMERAL),
        text("user", "two", EPHEMERAL),
        text("assistant", "b"),
        text("user", "three"),
      ],
    });
    expect(call.providerOptions?.anthropic).toEqual(EPHEMERAL.anthropic);
    expect(breakpointTtls(call, "anthropic")).toHaveLength(4);
    expect(call.prompt[0]?.providerOptions?.anthropic).toBeUndefined();
  });

  it("a 1-hour breakpoint of the caller's later on makes the frozen prompt's hint 1 hour too", async () => {
    const call = await send({
      messages: [text("user", "one", ONE_HOUR), text("assistant", "a"), text("user", "two")],
    });
    expect(call.prompt[0]?.providerOptions?.anthropic).toEqual(ONE_HOUR.anthropic);
    // After the caller's 1-hour breakpoint, the default 5 minutes fit.
    expect(call.prompt.at(-1)?.providerOptions?.anthropic).toEqual(EPHEMERAL.anthropic);
    expect(breakpointTtls(call, "anthropic")).toEqual(["1h", "1h", "5m"]);
  });

  it.each([
    {
      name: "ttl: '1h' behind a caller's 5-minute tool breakpoint becomes 5 minutes",
      toolOptions: EPHEMERAL,
      ttl: "1h",
      ttls: ["5m", "5m", "5m"],
    },
    {
      name: "a 1-hour automatic breakpoint, on the last block, makes every hint 1 hour",
      providerOptions: ONE_HOUR,
      ttls: ["1h", "1h", "1h"],
    },
    {
      name: "the hint on the automatic breakpoint's block takes its TTL; an earlier one keeps the TTL asked for",
      providerOptions: EPHEMERAL,
      ttl: "1h",
      ttls: ["1h", "5m", "5m"],
    },
  ] as const)("$name", async ({ ttls, ...request }) => {
    const { ttl, ...options } = { ttl: undefined, ...request };
    const messages = [text("user", "one"), text("assistant", "a"), text("user", "two")];
    const call = await send({ ...options, messages }, ttl ? { ttl } : undefined);
    expect(markedIndexes(call, "anthropic")).toEqual([0, call.prompt.length - 1]);
    expect(breakpointTtls(call, "anthropic")).toEqual(ttls);
  });

  it("skips a hint no TTL fits: between the caller's 5-minute tool breakpoint and a 1-hour one", async () => {
    const call = await send({
      toolOptions: EPHEMERAL,
      messages: [text("user", "one", ONE_HOUR), text("assistant", "a"), text("user", "two")],
    });
    expect(call.prompt[0]?.providerOptions?.anthropic).toBeUndefined();
    // The conversation's hint comes after both: 5 minutes fit there.
    expect(breakpointTtls(call, "anthropic")).toEqual(["5m", "1h", "5m"]);
  });
});
