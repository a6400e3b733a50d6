import { isReminderPart } from "../reminder-placement.js";
import {
  anthropicSpelling,
  bedrockSpelling,
  breakpointsOf,
  breakpointTtl,
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
   * the tools and the system text) and one on the latest stable message. Default `true`.
   */
  anthropic?: boolean;
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
  const providers = [
    ...(anthropic ? [{ spelling: anthropicSpelling, wanted: options.ttl ?? "5m" }] : []),
    ...(bedrock ? [{ spelling: bedrockSpelling, wanted: "5m" as const }] : []),
  ];
  for (const { spelling, wanted } of providers) {
    const placed = breakpointsOf(params, spelling);
    for (const index of targets) {
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
  }
  let providerOptions = params.providerOptions;
  if (openai !== false && providerOptions?.openai?.promptCacheKey === undefined) {
    const key = typeof openai === "function" ? openai(call.sessionId) : await promptCacheKey(call.sessionId);
    providerOptions = mergeOptions(providerOptions, { openai: { promptCacheKey: key } });
  }
  return { ...params, prompt, ...(providerOptions ? { providerOptions } : {}) };
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
    breakpointTtl(options, bedrockSpelling) === null
  ) {
    return value;
  }
  const kept: Record<string, unknown> = {};
  for (const [provider, values] of Object.entries(options)) {
    const {
      cacheControl: _control,
      cache_control: _snake,
      cachePoint: _point,
      ...rest
    } = provider === "anthropic" || provider === "bedrock" ? (values ?? {}) : { ...values };
    if (Object.keys(rest).length > 0) kept[provider] = rest;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}
