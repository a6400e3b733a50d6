import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { CallContext, ContextPlugin, RunMessage } from "../../src/index.js";

/** The system messages a call carried, in order. */
export function systemMessages(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).flatMap((message) => (message.role === "system" ? [message.content] : []));
}

/** Each non-system message a call carried as `role: text` (tool parts by their type), for readable asserts. */
export function conversation(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).flatMap((message) => (message.role === "system" ? [] : [describe(message)]));
}

/** A stored or sent message as `role: text`, tool parts as `[type toolName]`. */
export function describe(message: RunMessage): string {
  if (typeof message.content === "string") return `${message.role}: ${message.content}`;
  const parts = message.content.map((part) => {
    if (part.type === "text") return part.text;
    if (part.type === "tool-call" || part.type === "tool-result") return `[${part.type} ${part.toolName}]`;
    return `[${part.type}]`;
  });
  return `${message.role}: ${parts.join(" | ")}`;
}

/** A provider that records every hook call into `log` and can add instructions and messages. */
export function recordingProvider(
  sourceId: string,
  log: string[],
  add: { instructions?: string; messages?: RunMessage[] } = {},
): ContextPlugin {
  return {
    sourceId,
    beforeCall(run: CallContext) {
      log.push(`${sourceId}.beforeCall`);
      if (add.instructions !== undefined) run.extendInstructions(sourceId, add.instructions);
      if (add.messages !== undefined) run.extendMessages(sourceId, add.messages);
    },
    afterCall(run: CallContext) {
      log.push(`${sourceId}.afterCall(${run.inputMessages.length} in, ${run.responseMessages.length} out)`);
    },
  };
}

export function user(text: string): RunMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

/**
 * The TTLs of every `namespace` breakpoint a call carries, in the order the provider reads the prefix: tool
 * definitions, then each message (its parts, then the message itself), then the top-level automatic one.
 * A breakpoint without a `ttl` is `5m`.
 */
export function breakpointTtls(
  call: Pick<LanguageModelV3CallOptions, "prompt" | "tools" | "providerOptions">,
  namespace: "anthropic" | "bedrock",
): string[] {
  const ttl = (options: unknown): string[] => {
    const own = (options as Record<string, Record<string, { ttl?: string } | undefined>> | undefined)?.[
      namespace
    ];
    const mark = namespace === "anthropic" ? (own?.cacheControl ?? own?.cache_control) : own?.cachePoint;
    return mark ? [mark.ttl ?? "5m"] : [];
  };
  return [
    ...(call.tools ?? []).flatMap((tool) => ("providerOptions" in tool ? ttl(tool.providerOptions) : [])),
    ...call.prompt.flatMap((message) => [
      ...(Array.isArray(message.content) ? message.content.flatMap((part) => ttl(part.providerOptions)) : []),
      ...ttl(message.providerOptions),
    ]),
    ...ttl(call.providerOptions),
  ];
}

/** Whether no 1-hour breakpoint follows a 5-minute one (Anthropic and Bedrock refuse that order). */
export function longerTtlsFirst(ttls: readonly string[]): boolean {
  return !ttls.some((ttl, index) => ttl === "1h" && ttls.slice(0, index).includes("5m"));
}
