import { type LanguageModel, type ToolSet, wrapLanguageModel } from "ai";
import {
  type ContextMiddleware,
  type ContextMiddlewareOptions,
  contextMiddleware,
} from "./context-middleware.js";

type WrappableModel = Parameters<typeof wrapLanguageModel>[0]["model"];

/** Options of `contextPipeline`: the model to wrap, and `contextMiddleware`'s options. */
export interface ContextPipelineOptions extends ContextMiddlewareOptions {
  model: WrappableModel;
}

/** What to give `generateText` / `streamText`: the wrapped `model` and the `tools` that must run. */
export interface ContextPipeline {
  model: LanguageModel & WrappableModel;
  /** The plugins' tools (the context's included). Spread with your own: `{ ...pipeline.tools, weather }`. */
  readonly tools: ToolSet;
  middleware: ContextMiddleware;
}

/**
 * The model wrapped in `contextMiddleware`, and the tools to pass beside it. Middleware only sees tool
 * definitions; the SDK runs tools from its own `tools` option, so plugins' tools travel through here.
 */
export function contextPipeline(options: ContextPipelineOptions): ContextPipeline {
  const { model, ...middlewareOptions } = options;
  const middleware = contextMiddleware(middlewareOptions);
  return {
    model: wrapLanguageModel({ model, middleware }),
    get tools() {
      return middleware.tools;
    },
    middleware,
  };
}
