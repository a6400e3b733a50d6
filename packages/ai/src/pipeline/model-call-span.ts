import type { ContextTracer, TraceAttributes } from "@contextblocks/core";
import { GEN_AI, getContextTracer, traced } from "@contextblocks/core/store-kit";
import type { ModelUsage } from "./run-pipeline.js";

/**
 * A span per model call, so a trace shows what the prompt cache saved. Named and attributed after the
 * OpenTelemetry GenAI conventions for an inference call (`chat {model}`; `gen_ai.usage.*`, the cache
 * figures as `gen_ai.usage.cache_read.input_tokens` and `gen_ai.usage.cache_creation.input_tokens`). Nothing
 * of the prompt or the answer goes on it: counts and names only, so no content opt-in is needed.
 */
export interface ModelCallSpan {
  /** The call answered: its usage goes on the span, which ends. */
  end(usage: ModelUsage | undefined): void;
  /** The call failed (or its stream broke): the span records it and ends. */
  fail(error: unknown): void;
}

/** The span's attributes: the model, the session, and (once known) the usage. */
export interface ModelCallInfo {
  provider: string;
  modelId: string;
  sessionId: string;
}

const NO_SPAN: ModelCallSpan = { end: () => undefined, fail: () => undefined };

/** Opens the span of one model call (nothing at all when no tracer is in force). */
export function openModelCallSpan(tracer: ContextTracer | undefined, call: ModelCallInfo): ModelCallSpan {
  if ((tracer ?? getContextTracer()) === undefined) return NO_SPAN;
  let settle: ModelCallSpan = NO_SPAN;
  const outcome = new Promise<ModelUsage | undefined>((resolve, reject) => {
    settle = { end: resolve, fail: reject };
  });
  traced(
    tracer,
    `chat ${call.modelId}`,
    () => ({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": call.provider,
      "gen_ai.request.model": call.modelId,
      [GEN_AI.conversationId]: call.sessionId,
    }),
    async (span) => {
      span?.setAttributes(usageAttributes(await outcome));
    },
  ).catch(() => undefined); // the failure is the caller's to report; the span has recorded it
  return settle;
}

/** `gen_ai.usage.*` of a call's usage; counts the provider did not report are left out. */
export function usageAttributes(usage: ModelUsage | undefined): TraceAttributes {
  return {
    "gen_ai.usage.input_tokens": usage?.inputTokens?.total,
    "gen_ai.usage.output_tokens": usage?.outputTokens?.total,
    "gen_ai.usage.cache_read.input_tokens": usage?.inputTokens?.cacheRead,
    "gen_ai.usage.cache_creation.input_tokens": usage?.inputTokens?.cacheWrite,
  };
}

/** `call()`, a failure recorded on the span before it reaches the caller. */
export async function recordingFailure<T>(span: ModelCallSpan, call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    span.fail(error);
    throw error;
  }
}
