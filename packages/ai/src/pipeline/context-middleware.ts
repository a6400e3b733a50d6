import { type ContextBlocks, ContextError, type ContextTracer } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";
import type { Session } from "@contextblocks/sessions";
import { InMemoryRunStateStore } from "@contextblocks/sessions/memory";
import type { RunStateStore } from "@contextblocks/sessions/store-kit";
import type { LanguageModelMiddleware, ToolSet } from "ai";
import { type ContextBlocksPluginOptions, contextBlocksPlugin } from "./blocks-plugin.js";
import { type CacheHintOptions, withCacheHints } from "./cache-hints.js";
import { type ModelCallInfo, openModelCallSpan, recordingFailure } from "./model-call-span.js";
import type { ModelCallOptions, ModelStreamPart, WrappedModel } from "./model-types.js";
import type { ContextPlugin } from "./plugin.js";
import { type PreparedRun, RunPipeline } from "./run-pipeline.js";
import { pipelineSessionId, type SessionPluginOptions, sessionPlugin } from "./session-plugin.js";
import { StreamedContent } from "./streamed-content.js";

/** Options of `contextMiddleware` and `contextPipeline`. */
export interface ContextMiddlewareOptions {
  /**
   * The session that supplies everything (`sessionPlugin`, first of all plugins): the frozen prompt,
   * reminder and tools of `session.context`, the history (loaded, compaction overlays applied, and each
   * call's messages stored), its run state (`session.runState`) and its compaction. The caller passes only
   * new messages. Not with `context` (the session has its own); the session id is `session.id`.
   */
  session?: Session;
  /** Options for the session's plugin: `prepareContextTurn`'s and `SessionHistoryPlugin`'s. */
  sessionOptions?: SessionPluginOptions;
  /** Blocks to serve through the pipeline (`contextBlocksPlugin`), first of all plugins. */
  context?: ContextBlocks;
  /** Options for that plugin: `prepareContextTurn`'s (`reminder`, `unload`, `tools`…) and `sourceId`. */
  contextOptions?: ContextBlocksPluginOptions;
  /** Run and history plugins, in the order they run (after the context's). */
  plugins?: readonly ContextPlugin[];
  /**
   * Where plugin state persists. Default: `session.runState` when the session has one, else a new
   * `InMemoryRunStateStore` (lost on restart).
   */
  stateStore?: RunStateStore;
  /**
   * The session of every call, unless a call names its own with
   * `providerOptions: { contextblocks: { sessionId } }`. Default: `session.id` with a `session`, else
   * `"default"`.
   */
  sessionId?: string;
  /**
   * Prompt-cache hints on every call: Anthropic `cacheControl` breakpoints and Bedrock cache points on the
   * frozen prompt and the latest stable message, and an OpenAI `promptCacheKey` from the session id.
   * `false` sends none; an object tunes them (`ttl: "1h"`, one provider off…). Default `true`.
   */
  cacheHints?: boolean | CacheHintOptions;
  /**
   * Where each model call's span goes (`chat {model}`, with `gen_ai.usage.*` and the prompt cache's read
   * and write tokens). Default: the tracer registered with core's `setContextTracer` (`@contextblocks/otel`'s
   * `registerOtelTracer`), if any.
   */
  tracer?: ContextTracer;
}

/** The middleware, with the tools its plugins offer (pass them to `generateText` / `streamText`). */
export interface ContextMiddleware extends LanguageModelMiddleware {
  /** Every tool the plugins declare: the `ToolSet` the SDK must run. Recomputed on access. */
  readonly tools: ToolSet;
  /** The plugins in the order they run. */
  readonly plugins: readonly ContextPlugin[];
}

/**
 * Microsoft Agent Framework's context-provider pipeline (its context providers are plugins here) as AI SDK language-model middleware. With
 * `{ session }` the session supplies everything (`sessionPlugin`); other plugins run beside it.
 * Around every model call (each step of a tool loop is one) it:
 * 1. loads each plugin's state and the history of the one loading history plugin;
 * 2. runs every `beforeCall` in order, then sends the frozen prompt first, the caller's `system` next,
 *    plugin instructions after them, then plugin messages (history first) and the caller's messages,
 *    with the reminder on the newest user message, and prompt-cache hints (`cacheHints`);
 * 3. after the response (for a stream: once it finished), runs every `afterCall` in reverse order, stores
 *    history (never the reminder) and saves state. A plugin that throws fails the call with an error naming it.
 * Configuration errors (two loading history plugins, a repeated `sourceId`, a tool name clash) are
 * thrown here.
 */
export function contextMiddleware(options: ContextMiddlewareOptions = {}): ContextMiddleware {
  const { session } = options;
  if (session !== undefined) checkSessionOptions(options);
  const plugins = [
    ...(session ? [sessionPlugin(session, options.sessionOptions)] : []),
    ...(options.context ? [contextBlocksPlugin(options.context, options.contextOptions)] : []),
    ...(options.plugins ?? []),
  ];
  const pipeline = new RunPipeline(
    plugins,
    options.stateStore ?? session?.runState ?? new InMemoryRunStateStore(),
    options.sessionId ?? (session ? pipelineSessionId(session) : "default"),
  );
  const hints = options.cacheHints ?? true;
  /** The one place the call leaves the pipeline: with the cache hints, unless they are off. */
  const sent = (run: PreparedRun, model: WrappedModel): Promise<ModelCallOptions> | ModelCallOptions =>
    hints === false
      ? run.params
      : withCacheHints(
          run.params,
          {
            sessionId: run.basics.sessionId,
            frozenPrompt: run.frozenPrompt,
            model: { provider: model.provider, modelId: model.modelId },
          },
          hints === true ? {} : hints,
        );
  return {
    specificationVersion: "v3",
    plugins,
    get tools() {
      return pipeline.tools();
    },
    async wrapGenerate({ params, model }) {
      const run = await pipeline.begin(params);
      const callOptions = await sent(run, model);
      const span = openModelCallSpan(options.tracer, spanInfo(run, model));
      const result = await recordingFailure(span, () => model.doGenerate(callOptions));
      span.end(result.usage);
      await pipeline.finish(run, result.content, result.usage);
      return result;
    },
    async wrapStream({ params, model }) {
      const run = await pipeline.begin(params);
      const callOptions = await sent(run, model);
      const span = openModelCallSpan(options.tracer, spanInfo(run, model));
      const opened = await recordingFailure(span, () => model.doStream(callOptions));
      const { stream, ...rest } = opened;
      const collected = new StreamedContent();
      let finish: ModelStreamPart | undefined;
      let streamError: unknown;
      // Settled once: the whole run stored, or (aborted, failed) only the caller's new messages.
      let settled = false;
      const keepInputs = async () => {
        if (settled) return;
        settled = true;
        await pipeline.keepInputs(run);
      };
      const finished = stream.pipeThrough(
        new TransformStream<ModelStreamPart, ModelStreamPart>({
          transform(part, controller) {
            collected.add(part);
            if (part.type === "error") streamError ??= part.error;
            // The finish part waits until the run is stored, so a failing afterCall is reported before it.
            if (part.type === "finish") finish = part;
            else controller.enqueue(part);
          },
          async flush(controller) {
            try {
              if (collected.failed) {
                span.fail(streamError ?? new Error("the model's stream carried an error"));
                // An incomplete response (an error part) is not a run; the caller's message is kept.
                await keepInputs();
              } else {
                settled = true;
                span.end(finish?.type === "finish" ? finish.usage : undefined);
                await pipeline.finish(
                  run,
                  collected.result(),
                  finish?.type === "finish" ? finish.usage : undefined,
                );
              }
            } catch (error) {
              controller.enqueue({ type: "error", error });
            }
            if (finish !== undefined) controller.enqueue(finish);
          },
        }),
      );
      // A reader that stops early (streamText's abortSignal, a closed client) cancels the stream: the
      // caller's new messages are stored then, so the next turn still has them.
      const reader = finished.getReader();
      const guarded = new ReadableStream<ModelStreamPart>({
        async pull(controller) {
          try {
            const next = await reader.read();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          } catch (error) {
            span.fail(error);
            await keepInputs().catch(() => undefined);
            controller.error(error);
          }
        },
        async cancel(reason) {
          span.end(undefined); // stopped by the reader: no usage to report
          await keepInputs().catch(() => undefined);
          await reader.cancel(reason);
        },
      });
      return { ...rest, stream: guarded };
    },
  };
}

/** What a model call's span names: the inner model and the run's session. */
function spanInfo(run: PreparedRun, model: WrappedModel): ModelCallInfo {
  return { provider: model.provider, modelId: model.modelId, sessionId: run.basics.sessionId };
}

/** A session brings its own blocks and id: giving them again is a mistake worth naming. */
function checkSessionOptions(options: ContextMiddlewareOptions): void {
  if (options.context !== undefined) {
    throw new ContextError(
      "INVALID_CONFIG",
      "contextMiddleware: give either session or context, not both (the session's blocks are session.context)",
    );
  }
  if (options.contextOptions !== undefined) {
    throw new ContextError(
      "INVALID_CONFIG",
      "contextMiddleware: with a session, pass prepareContextTurn's options as sessionOptions, not contextOptions",
    );
  }
  const session = options.session as Session;
  if (options.sessionId !== undefined && options.sessionId !== pipelineSessionId(session)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `contextMiddleware: sessionId ${JSON.stringify(clipped(options.sessionId))} is not the session's id ${JSON.stringify(pipelineSessionId(session))} (leave sessionId out: it comes from session.id)`,
    );
  }
}
