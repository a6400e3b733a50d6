import { contextTools } from "@contextblocks/ai";
import { type BlockWrite, ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySearchProvider } from "@contextblocks/core/memory";
import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { answer, scriptedModel, toolStep } from "@contextblocks/test-kit/model";
import {
  type Context,
  context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs } from "ai";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otelTracer, recordStatementRows } from "../src/index.js";

beforeAll(() => {
  // The rows observer adds to the active span: the failing spans below are active while operations run.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

/** A span processor that fails where it is told to, after a working one has seen the span. */
class FailingProcessor implements SpanProcessor {
  constructor(private readonly failOn: { start?: boolean; end?: boolean }) {}
  onStart(): void {
    if (this.failOn.start) throw new Error("span processor failed on start");
  }
  onEnd(): void {
    if (this.failOn.end) throw new Error("span processor failed on end");
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function providerFailing(failOn: { start?: boolean; end?: boolean }): Tracer {
  const spanProcessors = [new SimpleSpanProcessor(new InMemorySpanExporter()), new FailingProcessor(failOn)];
  return new BasicTracerProvider({ spanProcessors }).getTracer("test");
}

const fail = (what: string) => () => {
  throw new Error(`${what} failed`);
};

/** A tracer that cannot start a span, whichever way it is asked. */
const tracerThatCannotStart = {
  startSpan: fail("startSpan"),
  startActiveSpan: fail("startActiveSpan"),
} as unknown as Tracer;

/** A span that keeps its identity (so it can be the active span) and throws from every other method. */
function spanThatThrows(real: Span): Span {
  return {
    spanContext: (): SpanContext => real.spanContext(),
    isRecording: () => true,
    setAttribute: fail("setAttribute"),
    setAttributes: fail("setAttributes"),
    addEvent: fail("addEvent"),
    addLink: fail("addLink"),
    addLinks: fail("addLinks"),
    setStatus: fail("setStatus"),
    updateName: fail("updateName"),
    end: fail("end"),
    recordException: fail("recordException"),
  };
}

/** A tracer whose spans start, then throw from every call made on them while the operation runs and after. */
function tracerWithSpansThatThrow(): Tracer {
  const real = new BasicTracerProvider().getTracer("test");
  const startSpan = (name: string, options?: SpanOptions, parent?: Context) =>
    spanThatThrows(real.startSpan(name, options, parent));
  return {
    startSpan,
    startActiveSpan: (name: string, ...rest: unknown[]) => {
      const run = rest.at(-1) as (span: Span) => unknown;
      const options = (rest.length > 1 ? rest[0] : undefined) as SpanOptions | undefined;
      const span = startSpan(name, options);
      return context.with(trace.setSpan(context.active(), span), run, undefined, span);
    },
  } as Tracer;
}

/** A writable block in memory that counts the writes it receives. */
class CountedBlock extends InMemoryContextProvider {
  writes = 0;
  override set(content: string, write?: BlockWrite): Promise<void> {
    this.writes += 1;
    return super.set(content, write);
  }
  override setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
    this.writes += 1;
    return super.setIf(expected, content, write);
  }
}

/** A searchable block in memory that counts the entries it is asked to store. */
class CountedNotes extends InMemorySearchProvider {
  writes = 0;
  override set(key: string, content: string): Promise<void> {
    this.writes += 1;
    return super.set(key, content);
  }
}

/** What a call settled to, comparable across runs. */
async function settle(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await call() };
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { rejected: { code, message } };
  }
}

const FACT = "Ada Lovelace was diagnosed with type 1 diabetes in March.";

/** An operation run with a tracer (or none): how it settled, and how many writes reached storage. */
type Operation = (tracer: Tracer | undefined) => Promise<{ outcome: unknown; writes: number }>;

const tracing = (tracer: Tracer | undefined) =>
  tracer === undefined ? {} : { tracer: otelTracer({ tracer }) };

const operations: Record<string, Operation> = {
  setBlock: async (tracer) => {
    const memory = new CountedBlock();
    const blocks = new ContextBlocks([{ label: "memory", provider: memory }], null, null, tracing(tracer));
    const outcome = await settle(() => blocks.setBlock("memory", FACT));
    return { outcome, writes: memory.writes };
  },

  "set_context on a block and on a keyed entry without a title (generateText)": async (tracer) => {
    const memory = new CountedBlock();
    const notes = new CountedNotes();
    const blocks = new ContextBlocks(
      [
        { label: "memory", provider: memory },
        { label: "notes", provider: notes },
      ],
      null,
      null,
      tracing(tracer),
    );
    const model = scriptedModel([
      toolStep([
        { toolName: "set_context", input: { label: "memory", content: FACT } },
        { toolName: "set_context", input: { label: "notes", content: FACT } },
      ]),
      answer("Noted."),
    ]);
    const result = await generateText({
      model,
      tools: contextTools(blocks),
      prompt: "Remember this.",
      stopWhen: stepCountIs(3),
    });
    const outcome = result.steps.flatMap((step) => step.toolResults.map((toolResult) => toolResult.output));
    return { outcome, writes: memory.writes + notes.writes };
  },

  "Session.appendMessage on SQLite, rows recorded on the span": async (tracer) => {
    const database = new Database(":memory:");
    const session = new SessionBuilder(sqliteBackend(database, { onStatement: recordStatementRows }))
      .forSession("chat-1")
      .withTracer(otelTracer(tracer === undefined ? {} : { tracer }))
      .build();
    const message = { id: "m1", role: "user" as const, parts: [{ type: "text" as const, text: FACT }] };
    const outcome = await settle(() => session.appendMessage(message));
    // Read back without any tracer: what the database holds.
    const stored = await new SessionBuilder(sqliteBackend(database))
      .forSession("chat-1")
      .build()
      .getHistory();
    return { outcome, writes: stored.length };
  },

  "a write that fails (a read-only block)": async (tracer) => {
    const blocks = new ContextBlocks(
      [{ label: "soul", provider: { get: async () => "You are terse." } }],
      null,
      null,
      tracing(tracer),
    );
    return { outcome: await settle(() => blocks.setBlock("soul", FACT)), writes: 0 };
  },
};

const failures: Record<string, () => Tracer> = {
  "a span processor that throws on start": () => providerFailing({ start: true }),
  "a span processor that throws on end": () => providerFailing({ end: true }),
  "a span processor that throws on start and on end": () => providerFailing({ start: true, end: true }),
  "a tracer whose startSpan throws": () => tracerThatCannotStart,
  "spans that throw from every method while the operation runs and after": tracerWithSpansThatThrow,
};

describe.each(Object.entries(failures))("with %s", (_failure, failingTracer) => {
  it.each(Object.entries(operations))(
    "%s runs once and settles as it does untraced",
    async (_operation, run) => {
      const untraced = await run(undefined);
      const traced = await run(failingTracer());
      expect(traced).toEqual(untraced);
    },
  );
});

describe("the untraced runs the comparison rests on", () => {
  it("store each write once and settle as intended", async () => {
    const results = await Promise.all(Object.values(operations).map((run) => run(undefined)));
    expect(results.map((result) => result.writes)).toEqual([1, 2, 1, 0]);
    const [block, tools, append, refused] = results.map((result) => result.outcome);
    expect(block).toMatchObject({ resolved: { label: "memory", content: FACT } });
    expect(tools).toEqual([
      expect.objectContaining({ isError: false, text: expect.stringMatching(/^Written to memory/) }),
      expect.objectContaining({ isError: false, text: expect.stringMatching(/^Indexed "ada-lovelace/) }),
    ]);
    expect(append).toEqual({ resolved: undefined });
    expect(refused).toEqual({ rejected: { code: "READONLY", message: expect.any(String) } });
  });
});

describe("an error that cannot be read", () => {
  it("is rethrown as it was when content capture puts its message on the span", async () => {
    // A provider's error whose message getter throws (a proxy, a lazy message): the status is lost, not the error.
    const unreadable = new Error("unused");
    Object.defineProperty(unreadable, "message", {
      get() {
        throw new Error("the message getter failed");
      },
    });
    const tracer = otelTracer({ tracer: providerFailing({}), captureContent: true });
    const failing = tracer.span("contextblocks.test", {}, async () => {
      throw unreadable;
    });
    await expect(failing).rejects.toBe(unreadable);
  });
});
