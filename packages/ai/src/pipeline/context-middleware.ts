import type { ContextBlocks } from "@contextblocks/core";
import type { LanguageModelMiddleware, ToolSet } from "ai";
import { type ContextBlocksRunProviderOptions, contextBlocksRunProvider } from "./blocks-run-provider.js";
import { type CacheHintOptions, withCacheHints } from "./cache-hints.js";
import type { ModelCallOptions, ModelStreamPart } from "./model-types.js";
import { type PreparedRun, RunPipeline } from "./run-pipeline.js";
import type { RunContextProvider } from "./run-provider.js";
import { InMemoryRunStateStore, type RunStateStore } from "./run-state.js";
import { StreamedContent } from "./streamed-content.js";

/** Options of `contextMiddleware` and `contextPipeline`. */
export interface ContextMiddlewareOptions {
  /** Blocks to serve through the pipeline (`contextBlocksRunProvider`), first of all providers. */
  context?: ContextBlocks;
  /** Options for that provider: `prepareContextTurn`'s (`reminder`, `unload`, `tools`…) and `sourceId`. */
  contextOptions?: ContextBlocksRunProviderOptions;
  /** Run and history providers, in the order they run (after the context's). */
  providers?: readonly RunContextProvider[];
  /** Where provider state persists. Default: a new `InMemoryRunStateStore` (lost on restart). */
  stateStore?: RunStateStore;
  /**
   * The session of every call, unless a call names its own with
   * `providerOptions: { contextblocks: { sessionId } }`. Default `"default"`.
   */
  sessionId?: string;
  /**
   * Prompt-cache hints on every call: Anthropic `cacheControl` breakpoints and Bedrock cache points on the
   * frozen prompt and the latest stable message, and an OpenAI `promptCacheKey` from the session id.
   * `false` sends none; an object tunes them (`ttl: "1h"`, one provider off…). Default `true`.
   */
  cacheHints?: boolean | CacheHintOptions;
}

/** The middleware, with the tools its providers offer (pass them to `generateText` / `streamText`). */
export interface ContextMiddleware extends LanguageModelMiddleware {
  /** Every tool the providers declare: the `ToolSet` the SDK must run. Recomputed on access. */
  readonly tools: ToolSet;
  /** The providers in the order they run. */
  readonly providers: readonly RunContextProvider[];
}

/**
 * Seed 003's run pipeline as AI SDK language-model middleware. Around every model call (each step of a
 * tool loop is one) it:
 * 1. loads each provider's state and the history of the one loading history provider;
 * 2. runs every `beforeRun` in order, then sends the frozen prompt first, the caller's `system` next,
 *    provider instructions after them, then provider messages (history first) and the caller's messages,
 *    with the reminder on the newest user message, and prompt-cache hints (`cacheHints`);
 * 3. after the response (for a stream: once it finished), runs every `afterRun` in reverse order, stores
 *    history (never the reminder) and saves state. A provider that throws fails the call with an error naming it.
 * Configuration errors (two loading history providers, a repeated `sourceId`, a tool name clash) are
 * thrown here.
 */
export function contextMiddleware(options: ContextMiddlewareOptions = {}): ContextMiddleware {
  const providers = [
    ...(options.context ? [contextBlocksRunProvider(options.context, options.contextOptions)] : []),
    ...(options.providers ?? []),
  ];
  const pipeline = new RunPipeline(
    providers,
    options.stateStore ?? new InMemoryRunStateStore(),
    options.sessionId ?? "default",
  );
  const hints = options.cacheHints ?? true;
  /** The one place the call leaves the pipeline: with the cache hints, unless they are off. */
  const sent = (run: PreparedRun): Promise<ModelCallOptions> | ModelCallOptions =>
    hints === false
      ? run.params
      : withCacheHints(
          run.params,
          { sessionId: run.basics.sessionId, frozenPrompt: run.frozenPrompt },
          hints === true ? {} : hints,
        );
  return {
    specificationVersion: "v3",
    providers,
    get tools() {
      return pipeline.tools();
    },
    async wrapGenerate({ params, model }) {
      const run = await pipeline.begin(params);
      const result = await model.doGenerate(await sent(run));
      await pipeline.finish(run, result.content);
      return result;
    },
    async wrapStream({ params, model }) {
      const run = await pipeline.begin(params);
      const { stream, ...rest } = await model.doStream(await sent(run));
      const collected = new StreamedContent();
      let finish: ModelStreamPart | undefined;
      const finished = stream.pipeThrough(
        new TransformStream<ModelStreamPart, ModelStreamPart>({
          transform(part, controller) {
            collected.add(part);
            // The finish part waits until the run is stored, so a failing afterRun is reported before it.
            if (part.type === "finish") finish = part;
            else controller.enqueue(part);
          },
          async flush(controller) {
            // An incomplete response (an error part) is not a run: nothing is stored.
            if (!collected.failed) {
              try {
                await pipeline.finish(run, collected.result());
              } catch (error) {
                controller.enqueue({ type: "error", error });
              }
            }
            if (finish !== undefined) controller.enqueue(finish);
          },
        }),
      );
      return { ...rest, stream: finished };
    },
  };
}
