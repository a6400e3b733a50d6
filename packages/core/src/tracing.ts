/**
 * The tracing hook: how core and sessions report spans without importing a tracing library. An app (or an
 * adapter such as `@contextblocks/otel`, which fills it with `@opentelemetry/api`) registers a
 * `ContextTracer`, per instance (`new ContextBlocks(…, { tracer })`, `new Session({ …, tracer })`) or for
 * the process (`setContextTracer`). With none registered an operation runs as it did, one branch later.
 *
 * Span names and attributes follow the OpenTelemetry GenAI semantic conventions for memory
 * (`gen_ai.operation.name` `search_memory`, `update_memory`, `upsert_memory`, `create_memory`,
 * `delete_memory`; `gen_ai.memory.store.id`, `gen_ai.memory.record.id`, `gen_ai.memory.record.count`) and
 * `contextblocks.*` attributes for what the conventions do not name (the frozen prompt, reminders,
 * compaction).
 */

/** Attribute values a span accepts (OpenTelemetry's primitive attribute values). */
export type TraceAttributeValue = string | number | boolean;

/** Attributes of a span; `undefined` values are left out. */
export type TraceAttributes = Record<string, TraceAttributeValue | undefined>;

/** The span an operation runs in: it may add attributes once it knows its result. */
export interface TraceSpan {
  setAttributes(attributes: TraceAttributes): void;
}

/** What core and sessions call to trace an operation. */
export interface ContextTracer {
  /**
   * Runs `operation` inside a span named `name` with `attributes` (set when the span starts, so samplers
   * see them), ends the span when it settles and records a rejection on it. Should return what `operation`
   * returns and rethrow what it throws; core does not rely on it (see `traced`).
   */
  span<T>(name: string, attributes: TraceAttributes, operation: (span: TraceSpan) => Promise<T>): Promise<T>;
  /**
   * Whether content may go on spans: query and record text (`gen_ai.memory.query.text`,
   * `gen_ai.memory.records`) and anything derived from it (an entry key a tool call gave, which is the
   * model's title or a slug and hash of its text; the prompt's SHA-256). They may hold personal data: the
   * conventions make them opt-in, and so does every tracer by default.
   */
  readonly captureContent?: boolean;
}

const GLOBAL_KEY = Symbol.for("@contextblocks/core.tracer");

type TracerHolder = { [GLOBAL_KEY]?: ContextTracer | undefined };

/**
 * Registers the tracer every `ContextBlocks` and `Session` without one of its own uses (`null` removes
 * it). Kept on `globalThis` under a registered symbol, so two copies of core in one process agree.
 */
export function setContextTracer(tracer: ContextTracer | null): void {
  (globalThis as TracerHolder)[GLOBAL_KEY] = tracer ?? undefined;
}

/** The tracer registered with `setContextTracer`, if any. */
export function getContextTracer(): ContextTracer | undefined {
  return (globalThis as TracerHolder)[GLOBAL_KEY];
}

/**
 * Runs `operation` in a span of `tracer` (default: the registered one); with no tracer, runs it directly.
 * `attributes` is a function so that building them costs nothing when nobody traces.
 *
 * Telemetry never changes the result: whatever the tracer throws or returns, before, during or after the
 * operation, `operation` runs exactly once and the caller gets what it returned or threw. A tracer that
 * fails before calling it has it run without a span; calls on the span that throw are ignored.
 */
export function traced<T>(
  tracer: ContextTracer | undefined,
  name: string,
  attributes: () => TraceAttributes,
  operation: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  const active = tracer ?? (globalThis as TracerHolder)[GLOBAL_KEY];
  if (active === undefined) return operation(undefined);
  return inSpan(active, name, attributes, operation);
}

async function inSpan<T>(
  tracer: ContextTracer,
  name: string,
  attributes: () => TraceAttributes,
  operation: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  // The operation's own promise, once started: a second call (from a faulty tracer) gets the same one.
  let started: Promise<T> | undefined;
  const start = (span: TraceSpan | undefined): Promise<T> => {
    if (started === undefined) {
      try {
        started = operation(span === undefined ? undefined : quietSpan(span));
      } catch (error) {
        started = Promise.reject(error);
      }
      // Handled here, so a tracer that drops it causes no unhandled rejection; the caller still gets it.
      started.catch(() => undefined);
    }
    return started;
  };
  try {
    // Waited for, so the span has ended when the caller resumes; what the tracer answers is not used.
    await tracer.span(name, quietly(attributes) ?? {}, start);
  } catch {
    // A tracer that failed: the operation's outcome stands (or it runs now, below, if it never started).
  }
  return start(undefined);
}

/** A span whose calls never throw into the operation. */
function quietSpan(span: TraceSpan): TraceSpan {
  return {
    setAttributes(attributes) {
      quietly(() => span.setAttributes(attributes));
    },
  };
}

/** `call()`, or `undefined` when it throws: for calls into telemetry, which must not fail an operation. */
function quietly<T>(call: () => T): T | undefined {
  try {
    return call();
  } catch {
    return undefined;
  }
}

/** The tracer in force: `tracer`, else the one registered with `setContextTracer`, else none. */
export function tracerInForce(tracer: ContextTracer | undefined): ContextTracer | undefined {
  return tracer ?? (globalThis as TracerHolder)[GLOBAL_KEY];
}

/** Whether the tracer in force opted in to content (query and record text, and what derives from it). */
export function capturesContent(tracer: ContextTracer | undefined): boolean {
  return (
    quietly(() => (tracer ?? (globalThis as TracerHolder)[GLOBAL_KEY])?.captureContent === true) === true
  );
}

/** Lowercase hex SHA-256 of text (Web Crypto: Node 20, Workers and browsers). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Attribute names the GenAI semantic conventions define for memory operations. */
export const GEN_AI = {
  operation: "gen_ai.operation.name",
  storeId: "gen_ai.memory.store.id",
  recordId: "gen_ai.memory.record.id",
  recordCount: "gen_ai.memory.record.count",
  queryText: "gen_ai.memory.query.text",
  records: "gen_ai.memory.records",
  conversationId: "gen_ai.conversation.id",
} as const;
