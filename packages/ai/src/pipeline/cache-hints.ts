import { isReminderPart } from "../reminder-placement.js";
import {
  anthropicSpelling,
  type Breakpoint,
  bedrockSpelling,
  breakpointsOf,
  breakpointTtl,
  type CacheTtl,
  compatibleTtl,
  MAXIMUM_CACHE_BREAKPOINTS,
} from "./cache-breakpoints.js";
import type { ModelCallOptions, RunMessage } from "./model-types.js";

/**
 * Prompt-cache hints the pipeline adds to every model call. Providers that do not know a namespace ignore it,
 * and none of them changes a byte of the prompt text: they only say where the provider may cache.
 */
export interface CacheHintOptions {
  /**
   * Anthropic (`@ai-sdk/anthropic`, also Claude on Vertex through the `anthropic` namespace): a
   * `providerOptions.anthropic.cacheControl` breakpoint on the system message with the frozen prompt (it caches
   * the tools and the system text) and one on the latest stable message. `"automatic"`: the frozen prompt's
   * breakpoint and Anthropic's automatic caching in place of the message's (one top-level `cache_control`,
   * which the provider puts on the last block and moves with the conversation). Default `true`.
   */
  anthropic?: boolean | "automatic";
  /**
   * Amazon Bedrock (`@ai-sdk/amazon-bedrock`): a `providerOptions.bedrock.cachePoint` after the same two
   * messages. Default `true`.
   */
  bedrock?: boolean;
  /**
   * OpenAI (`@ai-sdk/openai`): `providerOptions.openai.promptCacheKey`, so calls of one session reach the same
   * warm cache. `true` derives it from the session id (`contextblocks-` and 32 hex digits of its SHA-256:
   * stable across calls and restarts, and the id itself is not sent); a function makes your own. Default `true`.
   */
  openai?: boolean | ((sessionId: string) => string);
  /**
   * OpenAI's explicit breakpoints (GPT-5.6 and later, `@ai-sdk/openai` 4): `providerOptions.openai
   * .promptCacheBreakpoint` on the frozen prompt and on the last part of the latest stable message, as for
   * Anthropic, where the provider sends one (system messages, user text and files, tool results; the
   * Responses API sends none on assistant text). Placed only for a model `@ai-sdk/openai` serves whose id is
   * `gpt-5.6` or later: older models cache the prefix on their own and get the key alone. Default `true`
   * (with `openai` not `false`).
   */
  openaiBreakpoints?: boolean;
  /**
   * OpenAI's cache lifetime on GPT-5.6 and later (`promptCacheOptions.ttl`): `"30m"` (OpenAI's default) or
   * `"12h"` (Responses API only). Default: none sent.
   */
  openaiTtl?: "30m" | "12h";
  /**
   * Anthropic's cache lifetime: `"5m"` (writes cost 1.25× the input price) or `"1h"` (writes cost 2×; worth it
   * when turns are more than five minutes apart). Default `"5m"` (no `ttl` is sent). A hint takes the other
   * TTL when your own breakpoints require it: longer TTLs must come first (`compatibleTtl`).
   */
  ttl?: "5m" | "1h";
  /**
   * Also mark the latest stable message of the conversation, so each call reads the previous call's prefix.
   * `false` marks the frozen prompt only. Default `true`.
   */
  conversation?: boolean;
}

/** What the pipeline knows about the call it assembled. */
export interface CacheHintCall {
  sessionId: string;
  /** The call's first message is the frozen prompt. */
  frozenPrompt: boolean;
  /** The model the call goes to (the middleware's inner model): who decides OpenAI's breakpoints. */
  model?: { provider: string; modelId: string } | undefined;
}

type ProviderOptions = NonNullable<ModelCallOptions["providerOptions"]>;

/**
 * The call with cache hints added; `params` itself is never changed, nor any message the hints do not touch.
 * Options the caller set win: a `promptCacheKey` already present stays, and every breakpoint the caller placed
 * (on tools, system, messages, parts, and Anthropic's top-level automatic caching) counts against the limit
 * of four (ours are dropped first, the conversation's before the system's). A hint takes the TTL asked for
 * when the caller's breakpoints allow it, else the one that keeps longer TTLs first (`compatibleTtl`).
 */
export async function withCacheHints(
  params: ModelCallOptions,
  call: CacheHintCall,
  options: CacheHintOptions = {},
): Promise<ModelCallOptions> {
  const { anthropic = true, bedrock = true, openai = true, conversation = true } = options;
  const prompt = [...params.prompt];
  const targets = cacheBreakpointTargets(prompt, call.frozenPrompt, conversation);
  const automatic = anthropic === "automatic";
  const providers = [
    // With automatic caching, the top-level breakpoint stands for the conversation's.
    ...(anthropic
      ? [{ spelling: anthropicSpelling, wanted: options.ttl ?? "5m", targets: automatic ? [0] : targets }]
      : []),
    ...(bedrock ? [{ spelling: bedrockSpelling, wanted: "5m" as const, targets }] : []),
  ];
  let providerOptions = params.providerOptions;
  for (const { spelling, wanted, targets: indexes } of providers) {
    const placed = breakpointsOf(params, spelling);
    for (const index of indexes.filter((at) => targets.includes(at))) {
      if (placed.length >= MAXIMUM_CACHE_BREAKPOINTS) break;
      const message = prompt[index]!;
      if (breakpointTtl(message.providerOptions, spelling) !== null) continue;
      const position = index + 0.5;
      const ttl = compatibleTtl(placed, position, wanted);
      if (ttl === null) continue;
      placed.push({ position, ttl });
      prompt[index] = {
        ...message,
        providerOptions: mergeOptions(message.providerOptions, { [spelling.namespace]: spelling.write(ttl) }),
      } as RunMessage;
    }
    if (spelling === anthropicSpelling && automatic && conversation) {
      providerOptions = withAutomaticBreakpoint(providerOptions, placed, prompt.length, wanted);
    }
  }
  if (openai !== false) {
    if (providerOptions?.openai?.promptCacheKey === undefined) {
      const key =
        typeof openai === "function" ? openai(call.sessionId) : await promptCacheKey(call.sessionId);
      providerOptions = mergeOptions(providerOptions, { openai: { promptCacheKey: key } });
    }
    if (takesOpenAIBreakpoints(call.model)) {
      if (options.openaiBreakpoints !== false) {
        for (const index of targets) prompt[index] = withOpenAIBreakpoint(prompt[index]!);
      }
      if (options.openaiTtl !== undefined && providerOptions?.openai?.promptCacheOptions === undefined) {
        providerOptions = mergeOptions(providerOptions, {
          openai: { promptCacheOptions: { ttl: options.openaiTtl } },
        });
      }
    }
  }
  return { ...params, prompt, ...(providerOptions ? { providerOptions } : {}) };
}

/**
 * Anthropic's automatic caching: `providerOptions.anthropic.cacheControl` on the call, unless the caller set
 * it, there is no slot left, or no TTL keeps the order (it sits on the last block of all).
 */
function withAutomaticBreakpoint(
  providerOptions: ProviderOptions | undefined,
  placed: Breakpoint[],
  promptLength: number,
  wanted: CacheTtl,
): ProviderOptions | undefined {
  if (breakpointTtl(providerOptions, anthropicSpelling) !== null) return providerOptions;
  if (placed.length >= MAXIMUM_CACHE_BREAKPOINTS) return providerOptions;
  const position = promptLength - 0.5;
  const ttl = compatibleTtl(placed, position, wanted);
  if (ttl === null) return providerOptions;
  placed.push({ position, ttl });
  return mergeOptions(providerOptions, { anthropic: anthropicSpelling.write(ttl) });
}

/**
 * Whether the model takes OpenAI's explicit breakpoints: served by `@ai-sdk/openai` (provider `openai.*`)
 * with an id of GPT-5.6 or later, the models `@ai-sdk/openai` 4 sends `promptCacheOptions` for.
 */
export function takesOpenAIBreakpoints(model: CacheHintCall["model"]): boolean {
  if (model === undefined || !/^openai(\.|$)/.test(model.provider)) return false;
  const version = /^gpt-(\d+)(?:\.(\d+))?(?:-|$)/.exec(model.modelId);
  if (version === null) return false;
  const major = Number(version[1]);
  const minor = Number(version[2] ?? 0);
  return major > 5 || (major === 5 && minor >= 6);
}

/** An OpenAI breakpoint: on a system message itself, else on its last part when the provider sends one there. */
function withOpenAIBreakpoint(message: RunMessage): RunMessage {
  const mark = { openai: { promptCacheBreakpoint: { mode: "explicit" } } };
  if (message.role === "system") {
    if (message.providerOptions?.openai?.promptCacheBreakpoint !== undefined) return message;
    return { ...message, providerOptions: mergeOptions(message.providerOptions, mark) };
  }
  const parts = message.content;
  const last = parts.at(-1);
  if (last === undefined || !["text", "file", "tool-result"].includes(last.type)) return message;
  if (last.providerOptions?.openai?.promptCacheBreakpoint !== undefined) return message;
  const marked = { ...last, providerOptions: mergeOptions(last.providerOptions, mark) };
  return { ...message, content: [...parts.slice(0, -1), marked] } as RunMessage;
}

/**
 * Where the breakpoints go, most important first: the frozen prompt (index 0), then the latest stable
 * message. A message is stable when the next call sends it unchanged: the reminder travels on the newest user
 * message and moves on the next turn, so the latest stable message is the last one before the message that
 * carries a reminder, or the last message when none does.
 */
export function cacheBreakpointTargets(
  prompt: readonly RunMessage[],
  frozenPrompt: boolean,
  conversation: boolean,
): number[] {
  const targets: number[] = [];
  if (frozenPrompt && prompt[0]?.role === "system") targets.push(0);
  if (!conversation) return targets;
  let end = prompt.length;
  for (let index = prompt.length - 1; index >= 0; index--) {
    const content = prompt[index]!.content;
    if (Array.isArray(content) && content.some((part) => isReminderPart(part))) {
      end = index;
      break;
    }
  }
  const last = end - 1;
  // System messages after the frozen prompt (the caller's, providers' instructions) may change per call.
  if (last >= 0 && prompt[last]!.role !== "system") targets.push(last);
  return targets;
}

/** The default `promptCacheKey`: a digest of the session id, the same in every process. */
export async function promptCacheKey(sessionId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sessionId));
  const hex = [...new Uint8Array(digest).slice(0, 16)].map((byte) => byte.toString(16).padStart(2, "0"));
  return `contextblocks-${hex.join("")}`;
}

function mergeOptions(
  options: ProviderOptions | undefined,
  add: Record<string, Record<string, unknown>>,
): ProviderOptions {
  const merged: Record<string, Record<string, unknown>> = { ...options };
  for (const [provider, values] of Object.entries(add)) merged[provider] = { ...merged[provider], ...values };
  return merged as ProviderOptions;
}

/**
 * A `JSON.stringify` replacer that leaves the cache hints out of `providerOptions`: they say where to cache,
 * they are not part of the cached prefix, so a breakpoint that moved to a newer message changes nothing.
 */
export function ignoreCacheHints(key: string, value: unknown): unknown {
  if (key !== "providerOptions" || typeof value !== "object" || value === null) return value;
  const options = value as Record<string, Record<string, unknown> | undefined>;
  if (
    breakpointTtl(options, anthropicSpelling) === null &&
    breakpointTtl(options, bedrockSpelling) === null &&
    options.openai?.promptCacheBreakpoint === undefined
  ) {
    return value;
  }
  const kept: Record<string, unknown> = {};
  for (const [provider, values] of Object.entries(options)) {
    const {
      cacheControl: _control,
      cache_control: _snake,
      cachePoint: _point,
      promptCacheBreakpoint: _openai,
      ...rest
    } = provider === "anthropic" || provider === "bedrock" || provider === "openai"
      ? (values ?? {})
      : { ...values };
    if (Object.keys(rest).length > 0) kept[provider] = rest;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}
