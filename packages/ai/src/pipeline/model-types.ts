import type { LanguageModelMiddleware } from "ai";

/*
 * The provider-level types the middleware handles, derived from `ai`'s own `LanguageModelMiddleware` so this
 * package needs no runtime or type dependency on `@ai-sdk/provider` beyond what `ai` brings.
 */

type WrapGenerate = NonNullable<LanguageModelMiddleware["wrapGenerate"]>;
type WrapStream = NonNullable<LanguageModelMiddleware["wrapStream"]>;

/** What a language model call receives (`LanguageModelV3CallOptions`). */
export type ModelCallOptions = Parameters<WrapGenerate>[0]["params"];
/** The inner model a middleware calls (`LanguageModelV3`). */
export type WrappedModel = Parameters<WrapGenerate>[0]["model"];
/** What `doGenerate` resolves to (`LanguageModelV3GenerateResult`). */
export type ModelGenerateResult = Awaited<ReturnType<WrapGenerate>>;
/** What `doStream` resolves to (`LanguageModelV3StreamResult`). */
export type ModelStreamResult = Awaited<ReturnType<WrapStream>>;
/** One part of a model stream (`LanguageModelV3StreamPart`). */
export type ModelStreamPart = ModelStreamResult["stream"] extends ReadableStream<infer Part> ? Part : never;
/** One content part of a generate result (`LanguageModelV3Content`). */
export type ModelContent = ModelGenerateResult["content"][number];
/** A tool definition as a model call carries it (function or provider tool). */
export type ModelToolDefinition = NonNullable<ModelCallOptions["tools"]>[number];

/**
 * One message as the model receives it (`LanguageModelV3Message`): `system` with string content; `user`,
 * `assistant` and `tool` with an array of parts (text, file, reasoning, tool-call, tool-result). It has the
 * shape of the AI SDK's `ModelMessage` with array content, and is what history plugins load and store.
 */
export type RunMessage = ModelCallOptions["prompt"][number];
