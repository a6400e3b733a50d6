import {
  type ContextTracer,
  errorMessage,
  setContextTracer,
  type TraceAttributes,
  type TraceAttributeValue,
} from "@contextblocks/core";
import { type Attributes, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { countRowsOn } from "./statement-rows.js";

export { ROW_ATTRIBUTES, type RowReport, recordStatementRows } from "./statement-rows.js";

/** The instrumentation scope of the spans this package makes. */
export const INSTRUMENTATION_NAME = "@contextblocks/otel";

/**
 * The environment variable the OpenTelemetry GenAI semantic conventions name for opting in to content
 * capture (`gen_ai.memory.query.text`, `gen_ai.memory.records`).
 */
export const CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

export interface OtelTracerOptions {
  /** The tracer spans go to. Default: `trace.getTracer("@contextblocks/otel")` from the global provider. */
  tracer?: Tracer;
  /**
   * Put query and record text on spans (`gen_ai.memory.query.text`, `gen_ai.memory.records`). They may hold
   * personal data. Default: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment
   * (where there is a `process.env`), else `false`.
   */
  captureContent?: boolean;
}

/**
 * Core's tracing hook filled with `@opentelemetry/api`: each traced operation becomes an `INTERNAL` span,
 * the active span while it runs (so the storage calls under it nest, and it nests under the AI SDK's
 * `ai.toolCall` span when a block tool runs inside `experimental_telemetry`). A failure sets the span's
 * status to error and `error.type` to the `ContextError` code (else the error's name). With no tracer
 * provider registered, the API's spans are no-ops.
 */
export function otelTracer(options: OtelTracerOptions = {}): ContextTracer {
  const fixed = options.tracer;
  const captureContent = options.captureContent ?? contentOptInFromEnv();
  return {
    captureContent,
    span(name, attributes, operation) {
      const tracer = fixed ?? trace.getTracer(INSTRUMENTATION_NAME);
      return tracer.startActiveSpan(
        name,
        { kind: SpanKind.INTERNAL, attributes: toOtel(attributes) },
        async (span) => {
          countRowsOn(span);
          try {
            return await operation({
              setAttributes: (more) => {
                span.setAttributes(toOtel(more));
              },
            });
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
            span.setAttribute("error.type", errorType(error));
            if (error instanceof Error) span.recordException(error);
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },
  };
}

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
