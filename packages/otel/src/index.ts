import {
  type ContextTracer,
  setContextTracer,
  type TraceAttributes,
  type TraceAttributeValue,
  type TraceSpan,
} from "@contextblocks/core";
import { errorMessage } from "@contextblocks/core/store-kit";
import { type Attributes, context, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { quietly } from "./quietly.js";
import { INSTRUMENTATION_NAME } from "./scope.js";
import { countRowsOn } from "./statement-rows.js";

export { INSTRUMENTATION_NAME } from "./scope.js";
export { ROW_ATTRIBUTES, type RowReport, recordStatementRows } from "./statement-rows.js";

/**
 * The environment variable the OpenTelemetry GenAI semantic conventions name for opting in to content
 * capture (`gen_ai.memory.query.text`, `gen_ai.memory.records`).
 */
export const CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

export interface OtelTracerOptions {
  /** The tracer spans go to. Default: `trace.getTracer("@contextblocks/otel")` from the global provider. */
  tracer?: Tracer;
  /**
   * Put content on spans: query and record text (`gen_ai.memory.query.text`, `gen_ai.memory.records`) and
   * what is derived from it (entry keys a tool call gave, the prompt's SHA-256, error messages and
   * exception events). They may hold personal data. Default:
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment (where there is a
   * `process.env`), else `false`.
   */
  captureContent?: boolean;
}

/**
 * Core's tracing hook filled with `@opentelemetry/api`: each traced operation becomes an `INTERNAL` span,
 * the active span while it runs (so the storage calls under it nest, and it nests under the AI SDK's
 * `ai.toolCall` span when a block tool runs inside `experimental_telemetry`). A failure sets the span's
 * status to error and `error.type` to the `ContextError` code (else the error's name); its message and
 * an `exception` event only with content capture (the text may quote content). With no tracer
 * provider registered, the API's spans are no-ops. Every call into OpenTelemetry is guarded: a tracer or
 * span processor that throws loses the span (reported to `diag`), never the operation's result.
 */
export function otelTracer(options: OtelTracerOptions = {}): ContextTracer {
  const fixed = options.tracer;
  const captureContent = options.captureContent ?? contentOptInFromEnv();
  return {
    captureContent,
    async span(name, attributes, operation) {
      const span = quietly("starting a span", () => {
        const tracer = fixed ?? trace.getTracer(INSTRUMENTATION_NAME);
        const started = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: toOtel(attributes) });
        countRowsOn(started);
        return started;
      });
      if (span === undefined) return operation(NO_SPAN);
      const traceSpan: TraceSpan = {
        setAttributes: (more) => {
          quietly("setting span attributes", () => span.setAttributes(toOtel(more)));
        },
      };
      try {
        return await context.with(trace.setSpan(context.active(), span), operation, undefined, traceSpan);
      } catch (error) {
        // An error's text may quote what the model wrote (a key, a title): content, so only on opt-in. Read
        // inside `quietly`: an error whose message cannot be read is still rethrown as it was.
        quietly("setting a span's status", () =>
          span.setStatus(
            captureContent
              ? { code: SpanStatusCode.ERROR, message: errorMessage(error) }
              : { code: SpanStatusCode.ERROR },
          ),
        );
        quietly("setting error.type", () => span.setAttribute("error.type", errorType(error)));
        if (captureContent) {
          quietly("recording an exception", () => {
            if (error instanceof Error) span.recordException(error);
          });
        }
        throw error;
      } finally {
        quietly("ending a span", () => span.end());
      }
    },
  };
}

/** What an operation gets when no span could be started: attributes go nowhere. */
const NO_SPAN: TraceSpan = { setAttributes: () => undefined };

/**
 * Registers `otelTracer(options)` as the tracer of every `ContextBlocks` and `Session` without one of
 * their own (core's `setContextTracer`). Returns the function that unregisters it.
 */
export function registerOtelTracer(options: OtelTracerOptions = {}): () => void {
  setContextTracer(otelTracer(options));
  return () => setContextTracer(null);
}

function toOtel(attributes: TraceAttributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) out[key] = value as TraceAttributeValue;
  }
  return out;
}

function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.length > 0) return code;
    if (error instanceof Error && error.name.length > 0) return error.name;
  }
  return "_OTHER";
}

function contentOptInFromEnv(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[CAPTURE_CONTENT_ENV]?.toLowerCase() === "true";
}
