import { ContextBlocks } from "@contextblocks/core";
import { SessionBuilder } from "@contextblocks/sessions";
import { SqliteContextProvider, sqliteBackend } from "@contextblocks/sqlite";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { otelTracer, ROW_ATTRIBUTES, recordStatementRows } from "../src/index.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("test");
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => exporter.reset());

const named = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name === name);

describe("rows read and written on spans (better-sqlite3)", () => {
  it("a block write's update_memory span carries its statements and rows changed", async () => {
    const database = new Database(":memory:");
    const memory = new SqliteContextProvider(database, { onStatement: recordStatementRows });
    const blocks = new ContextBlocks([{ label: "memory", provider: memory }], undefined, undefined, {
      tracer: otelTracer({ tracer }),
    });
    await blocks.setBlock("memory", "The user is Ada.");
    await blocks.setBlock("memory", "The user is Ada.");
    const [first, unchanged] = named("update_memory");
    // With history (the default): one row, the block's, which keeps its newest versions too.
    expect(first?.attributes).toMatchObject({
      "gen_ai.memory.store.id": "memory",
      [ROW_ATTRIBUTES.rowsChanged]: 1,
    });
    expect(first?.attributes[ROW_ATTRIBUTES.statements]).toBeGreaterThanOrEqual(2);
    // An unchanged write changes no row: the span says so.
    expect(unchanged?.attributes[ROW_ATTRIBUTES.rowsChanged]).toBe(0);
    // better-sqlite3 reports no rows read: the attribute is left out rather than guessed.
    expect(first?.attributes[ROW_ATTRIBUTES.rowsRead]).toBeUndefined();
    // Another library's active span gets no row attributes from the same observer.
    await tracer.startActiveSpan("someone else's", async (span) => {
      await memory.set("inside another library's span");
      span.end();
    });
    expect(named("someone else's")[0]?.attributes[ROW_ATTRIBUTES.statements]).toBeUndefined();
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("a session append's create_memory span carries the rows its statements changed", async () => {
    const database = new Database(":memory:");
    const session = new SessionBuilder(sqliteBackend(database, { onStatement: recordStatementRows }))
      .forSession("chat-1")
      .withTracer(otelTracer({ tracer }))
      .build();
    await session.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "Hello there." }] });
    const [append] = named("create_memory");
    expect(append?.attributes).toMatchObject({ "gen_ai.operation.name": "create_memory" });
    expect(append?.attributes[ROW_ATTRIBUTES.statements]).toBeGreaterThanOrEqual(1);
    expect(append?.attributes[ROW_ATTRIBUTES.rowsChanged]).toBeGreaterThanOrEqual(1);
  });
});
