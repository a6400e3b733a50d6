import { contextPipeline } from "@contextblocks/ai";
import { setContextTracer } from "@contextblocks/core";
import { InMemorySearchProvider, InMemoryStore } from "@contextblocks/core/memory";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { answer, scriptedModel, toolStep } from "@contextblocks/test-kit/model";
import { context, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { otelTracer, registerOtelTracer } from "../src/index.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("test");
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  // Spans nest through the active context: the AI SDK's `ai.toolCall` span is the parent of ours.
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => exporter.reset());

function chat(notes: InMemorySearchProvider, captureContent = false): Session {
  return new SessionBuilder(inMemoryBackend())
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are terse." } })
    .withContext("memory", { description: "Facts about the user", maxTokens: 400 })
    .withContext("notes", { description: "Searchable notes", provider: notes })
    .withCachedPrompt()
    .withTracer(otelTracer({ tracer, captureContent }))
    .onCompaction(
      createCompactFunction({
        summarize: async () => "## Topic\nThe user introduced themselves.",
        protectHead: 0,
        minTailMessages: 1,
        tailTokenBudget: 0,
      }),
    )
    .build();
}

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const parentOf = (spans: readonly ReadableSpan[], span: ReadableSpan | undefined) =>
  spans.find((candidate) => candidate.spanContext().spanId === span?.parentSpanContext?.spanId);

describe("GenAI memory spans of a scripted turn", () => {
  it("a write, a search and a compaction, nested under the AI SDK's ai.toolCall spans", async () => {
    const notes = new InMemorySearchProvider({ store: new InMemoryStore() });
    const session = chat(notes);
    await session.context.setEntry("notes", "deploy", "Deploys happen on Tuesdays.");
    expect(named(exporter.getFinishedSpans(), "upsert_memory")[0]?.attributes).toMatchObject({
      "gen_ai.memory.store.id": "notes",
      "gen_ai.memory.record.id": "deploy",
    });
    const model = scriptedModel([
      toolStep([
        { toolName: "set_context", input: { label: "memory", content: "The user is Ada." } },
        { toolName: "search_context", input: { label: "notes", query: "deploy" } },
      ]),
      answer("Noted, Ada."),
    ]);
    const pipeline = contextPipeline({ model, session });
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I'm Ada. When do we deploy?",
      stopWhen: stepCountIs(3),
      experimental_telemetry: { isEnabled: true, tracer },
    });
    const compacted = await session.compact();
    if (!compacted?.compacted) throw new Error(`not compacted: ${JSON.stringify(compacted)}`);
    const spans = exporter.getFinishedSpans();

    const [write] = named(spans, "update_memory");
    expect(write?.attributes).toMatchObject({
      "gen_ai.operation.name": "update_memory",
      "gen_ai.memory.store.id": "memory",
      "gen_ai.memory.record.count": 1,
    });
    expect(write?.attributes["gen_ai.memory.records"]).toBeUndefined();
    expect(parentOf(spans, write)?.name).toBe("ai.toolCall");
    expect(parentOf(spans, write)?.attributes["ai.toolCall.name"]).toBe("set_context");

    const [search] = named(spans, "search_memory").filter(
      (span) => span.attributes["gen_ai.memory.store.id"] === "notes",
    );
    expect(search?.attributes).toMatchObject({
      "gen_ai.operation.name": "search_memory",
      "gen_ai.memory.record.count": 1,
    });
    expect(search?.attributes["gen_ai.memory.query.text"]).toBeUndefined();
    expect(parentOf(spans, search)?.attributes["ai.toolCall.name"]).toBe("search_context");

    // The session stored the turn (the user's message, the tool step, the answer) as memory records.
    const appends = named(spans, "create_memory");
    expect(appends.length).toBeGreaterThan(0);
    for (const span of appends) {
      expect(span.attributes).toMatchObject({
        "gen_ai.memory.store.id": "session-messages",
        "gen_ai.conversation.id": "chat-1",
      });
    }
    const stored = appends.reduce(
      (sum, span) => sum + Number(span.attributes["gen_ai.memory.record.count"]),
      0,
    );
    expect(stored).toBe(3);

    const [freeze] = named(spans, "contextblocks.freeze");
    expect(freeze?.attributes["contextblocks.prompt.tokens"]).toBeGreaterThan(0);
    // A hash of the prompt is derived from what the blocks hold: only with content capture.
    expect(freeze?.attributes["contextblocks.prompt.sha256"]).toBeUndefined();
    expect(freeze?.attributes["contextblocks.prompt.origin"]).toBe("rendered");

    const [compaction] = named(spans, "contextblocks.compaction");
    const before = Number(compaction?.attributes["contextblocks.compaction.tokens_before"]);
    const after = Number(compaction?.attributes["contextblocks.compaction.tokens_after"]);
    expect(compaction?.attributes["gen_ai.conversation.id"]).toBe("chat-1");
    expect(compaction?.attributes["contextblocks.compaction.from_message_id"]).toBe(compacted?.fromMessageId);
    expect(after).toBeLessThan(before);
    // The compaction refreshed the prompt: its span is a child of the compaction's.
    const [refresh] = named(spans, "contextblocks.refresh");
    expect(parentOf(spans, refresh)?.name).toBe("contextblocks.compaction");
  });

  it("puts query and record text on spans only when the app opts in", async () => {
    const notes = new InMemorySearchProvider({ store: new InMemoryStore() });
    const session = chat(notes, true);
    await session.context.setBlock("memory", "The user is Ada.");
    await session.context.search("notes", "deploy day");
    await session.search("hello");
    const spans = exporter.getFinishedSpans();
    expect(named(spans, "update_memory")[0]?.attributes["gen_ai.memory.records"]).toBe(
      JSON.stringify([{ content: "The user is Ada." }]),
    );
    const queries = named(spans, "search_memory").map((span) => span.attributes["gen_ai.memory.query.text"]);
    expect(queries).toEqual(["deploy day", "hello"]);
  });

  it("records a failure as an error span with the ContextError code as error.type", async () => {
    const session = chat(new InMemorySearchProvider({ store: new InMemoryStore() }));
    await expect(session.context.setBlock("soul", "overwrite")).rejects.toThrow();
    const [span] = named(exporter.getFinishedSpans(), "update_memory");
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes["error.type"]).toBe("READONLY");
  });

  it("registerOtelTracer traces every instance without a tracer of its own, until unregistered", async () => {
    const stop = registerOtelTracer({ tracer });
    try {
      const session = new SessionBuilder(inMemoryBackend()).withContext("memory").build();
      await session.context.setBlock("memory", "x");
      expect(named(exporter.getFinishedSpans(), "update_memory")).toHaveLength(1);
    } finally {
      stop();
    }
    const untraced = new SessionBuilder(inMemoryBackend()).withContext("memory").build();
    await untraced.context.setBlock("memory", "y");
    expect(named(exporter.getFinishedSpans(), "update_memory")).toHaveLength(1);
    setContextTracer(null);
  });
});

describe("the span of a model call (@contextblocks/ai's pipeline)", () => {
  it("carries the prompt cache's read and write tokens as GenAI usage attributes", async () => {
    const model = new MockLanguageModelV3({
      modelId: "claude-sonnet-4-5",
      doGenerate: {
        content: [{ type: "text", text: "Hi." }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: 1_200, noCache: 50, cacheRead: 1_000, cacheWrite: 150 },
          outputTokens: { total: 3, text: 3, reasoning: undefined },
        },
        warnings: [],
      },
    });
    const session = new SessionBuilder(inMemoryBackend())
      .forSession("chat-1")
      .withContext("soul", { provider: { get: async () => "You are terse." } })
      .build();
    const pipeline = contextPipeline({ model, session, tracer: otelTracer({ tracer }) });
    await generateText({ model: pipeline.model, prompt: "Hello." });
    const [span] = named(exporter.getFinishedSpans(), "chat claude-sonnet-4-5");
    expect(span?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.conversation.id": "chat-1",
      "gen_ai.usage.input_tokens": 1_200,
      "gen_ai.usage.cache_read.input_tokens": 1_000,
      "gen_ai.usage.cache_creation.input_tokens": 150,
    });
    expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
  });
});
