import type { SessionMessage, SessionMessagePart } from "@contextblocks/sessions";
import type { RunMessage } from "../pipeline/model-types.js";
import {
  runMessagesOf,
  type ToolPart,
  toolOf,
  toolOutputOf,
  verbatimPartType,
} from "./run-message-decoding.js";

/*
 * The messages of a model call as session messages, in the AI SDK's UI shape: text, reasoning and file
 * parts; a tool call as a `tool-<name>` part that later receives its result. Each conversion is checked by
 * reading it back: what would not replay byte for byte is stored as it was instead (one `data-run-message`
 * part), so the prompt cache never depends on a case this file did not foresee.
 */

type ContentPart = Exclude<RunMessage, { role: "system" }>["content"][number];
type ToolResultPart = Extract<ContentPart, { type: "tool-result" }>;
type ProviderOptions = NonNullable<RunMessage["providerOptions"]>;

/** A session message holding `message`: UI shaped when that replays exactly, else stored as it was. */
export function toSessionMessage(message: RunMessage, id: string, createdAt: Date): SessionMessage {
  const shaped = uiShaped(message, id, createdAt);
  if (shaped !== null && sameJson(runMessagesOf([shaped]), [message])) return shaped;
  return {
    id,
    role: message.role,
    parts: [{ type: verbatimPartType, data: jsonSafe(message) } as SessionMessagePart],
    createdAt,
  };
}

/**
 * `assistant` with the results of a tool message written into its tool parts (what a chat UI shows), or
 * `null` when that would not read back as the assistant's messages followed by `tool` exactly (results of
 * calls it does not hold, an approval, a second tool message for the same step).
 */
export function withToolResults(assistant: SessionMessage, tool: RunMessage): SessionMessage | null {
  if (assistant.role !== "assistant" || tool.role !== "tool" || tool.providerOptions !== undefined)
    return null;
  const parts = assistant.parts.map((part) => ({ ...part }));
  for (const result of tool.content) {
    if (result.type !== "tool-result") return null;
    const part = parts.find((candidate) => toolOf(candidate)?.part.toolCallId === result.toolCallId);
    const found = part === undefined ? null : toolOf(part);
    if (part === undefined || found === null || found.name !== result.toolName) return null;
    if (toolOutputOf(found.part) !== null) return null;
    Object.assign(part, resultFields(result));
  }
  const updated = { ...assistant, parts };
  const expected = [...runMessagesOf([assistant]), tool];
  return sameJson(runMessagesOf([updated]), expected) ? updated : null;
}

function uiShaped(message: RunMessage, id: string, createdAt: Date): SessionMessage | null {
  const metadata = message.providerOptions ? { metadata: { providerOptions: message.providerOptions } } : {};
  if (message.role === "system") {
    return { id, role: "system", parts: [{ type: "text", text: message.content }], createdAt, ...metadata };
  }
  if (message.role === "tool") return null;
  const parts: SessionMessagePart[] = [];
  for (const part of message.content) {
    const shaped = uiPart(part, parts);
    if (shaped === null) return null;
    if (shaped !== "merged") parts.push(shaped);
  }
  return { id, role: message.role, parts, createdAt, ...metadata };
}

/** One content part in UI shape; a provider-executed result goes into its call's part (`"merged"`). */
function uiPart(part: ContentPart, parts: SessionMessagePart[]): SessionMessagePart | "merged" | null {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text, ...metadataOf(part.providerOptions) };
    case "reasoning":
      return { type: "reasoning", text: part.text, ...metadataOf(part.providerOptions) };
    case "file":
      return {
        type: "file",
        mediaType: part.mediaType,
        ...(part.filename !== undefined ? { filename: part.filename } : {}),
        url: fileUrl(part.data, part.mediaType),
        ...metadataOf(part.providerOptions),
      } as SessionMessagePart;
    case "tool-call":
      return {
        type: `tool-${part.toolName}`,
        toolCallId: part.toolCallId,
        state: "input-available",
        input: part.input,
        ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
        ...(part.providerOptions ? { callProviderMetadata: part.providerOptions } : {}),
      } as SessionMessagePart;
    case "tool-result": {
      const call = parts.find((candidate) => toolOf(candidate)?.part.toolCallId === part.toolCallId);
      if (call === undefined) return null;
      Object.assign(call, resultFields(part));
      return "merged";
    }
    default:
      return null;
  }
}

/** A result as UI tool-part fields; `modelOutput` only when `output` / `errorText` would not give it back. */
function resultFields(result: ToolResultPart): Partial<ToolPart> {
  const { output } = result;
  let fields: Partial<ToolPart>;
  switch (output.type) {
    case "text":
    case "json":
    case "content":
      fields = { state: "output-available", output: output.value };
      break;
    case "error-text":
      fields = { state: "output-error", errorText: output.value };
      break;
    case "error-json":
      fields = { state: "output-error", errorText: JSON.stringify(output.value) };
      break;
    default:
      fields = { state: "output-error", errorText: "Tool execution was denied." };
      break;
  }
  const derived = toolOutputOf({ toolCallId: result.toolCallId, type: "tool", ...fields } as ToolPart);
  if (!sameJson(derived, output)) fields.modelOutput = jsonSafe(output);
  if (result.providerOptions) fields.resultProviderMetadata = result.providerOptions;
  return fields;
}

function metadataOf(options: ProviderOptions | undefined): { providerMetadata?: ProviderOptions } {
  return options ? { providerMetadata: options } : {};
}

/** File data as a UI part's `url`: bytes and base64 text as a data URL, a link as it is. */
function fileUrl(data: unknown, mediaType: string): string {
  if (data instanceof URL) return data.href;
  if (data instanceof Uint8Array) return `data:${mediaType};base64,${base64Of(data)}`;
  return `data:${mediaType};base64,${String(data)}`;
}

function base64Of(bytes: Uint8Array): string {
  let binary = "";
  for (let index = 0; index < bytes.length; index += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  }
  return btoa(binary);
}

/**
 * JSON as a provider would send it: bytes as base64 (what every provider does with them), links as their
 * address. Two values with the same JSON reach the model as the same bytes.
 */
function jsonOf(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (item instanceof Uint8Array ? base64Of(item) : item));
}

export function sameJson(left: unknown, right: unknown): boolean {
  return jsonOf(left) === jsonOf(right);
}

/** A copy that survives JSON: bytes become base64 text (file data accepts either). */
function jsonSafe<T>(value: T): T {
  return JSON.parse(jsonOf(value)) as T;
}
