import type { SessionMessage, SessionMessagePart } from "@contextblocks/sessions";
import type { RunMessage } from "../pipeline/model-types.js";
import { messageProblem } from "../pipeline/run-messages.js";

/*
 * Session messages (UI-message shaped) read back as the messages a model receives. The key order of every
 * object follows the AI SDK's own prompt conversion, so a turn stored by `SessionHistoryPlugin` replays
 * byte for byte (see run-message-encoding.ts for the other direction).
 */

type ContentPart = Exclude<RunMessage, { role: "system" }>["content"][number];
type ToolResultOutput = Extract<ContentPart, { type: "tool-result" }>["output"];
type ProviderOptions = NonNullable<RunMessage["providerOptions"]>;

/** The part type of a message stored as it was (one the UI shape cannot hold exactly). */
export const verbatimPartType = "data-run-message";

/** A UI tool part's fields this package reads and writes (`tool-<name>` or `dynamic-tool`). */
export interface ToolPart extends SessionMessagePart {
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  providerExecuted?: boolean;
  callProviderMetadata?: ProviderOptions;
  resultProviderMetadata?: ProviderOptions;
  /** The exact model output, when the UI fields alone would not give it back. */
  modelOutput?: ToolResultOutput;
  approval?: { reason?: string };
}

/**
 * The messages, in order, as model messages: a stored turn as it was sent; UI messages written by other
 * code (a chat UI) converted the way the AI SDK's `convertToModelMessages` does without tools (tool output
 * as `text` when a string, else `json`; an error as `error-text`). Parts a model never reads (step
 * boundaries, sources, data parts) are left out, and so are messages left empty by that.
 */
export function runMessagesOf(messages: readonly SessionMessage[]): RunMessage[] {
  return messages.flatMap(runMessagesOfOne);
}

function runMessagesOfOne(message: SessionMessage): RunMessage[] {
  const [first] = message.parts;
  if (first?.type === verbatimPartType || message.parts.some((part) => part.type === verbatimPartType)) {
    // Only a message of one verbatim part, whose stored message has the session message's own role, is
    // one the history encoder wrote; anything else (a client's part, a malformed one) is dropped, never
    // revived as another role and never failing the turns after it.
    if (message.parts.length !== 1) {
      return runMessagesOfOne({
        ...message,
        parts: message.parts.filter((part) => part.type !== verbatimPartType),
      });
    }
    const revived = reviveVerbatim((first as { data?: unknown }).data, message.role);
    return revived === null ? [] : [revived];
  }
  const options = messageOptions(message);
  switch (message.role) {
    case "system": {
      const text = message.parts.flatMap((part) => (isText(part) ? [part.text] : [])).join("\n");
      return text.length === 0 ? [] : [{ role: "system", content: text, ...options }];
    }
    case "user": {
      const content = message.parts.flatMap((part): ContentPart[] => {
        if (isText(part)) return [textPart(part)];
        if (part.type === "file") return fileParts(part, "user");
        return [];
      });
      return content.length === 0 ? [] : [{ role: "user", content, ...options } as RunMessage];
    }
    case "assistant":
      return stepsOf(message.parts).flatMap((parts) => assistantStep(parts, options));
    default:
      return [];
  }
}

/** The parts of each step: a UI assistant message holds every step of a tool loop, split by `step-start`. */
function stepsOf(parts: readonly SessionMessagePart[]): SessionMessagePart[][] {
  const steps: SessionMessagePart[][] = [[]];
  for (const part of parts) {
    if (part.type === "step-start") {
      if (steps.at(-1)!.length > 0) steps.push([]);
    } else {
      steps.at(-1)!.push(part);
    }
  }
  return steps;
}

/** One step: the assistant message, then a tool message with the results of tools the SDK ran. */
function assistantStep(parts: readonly SessionMessagePart[], options: MessageOptions): RunMessage[] {
  const content: ContentPart[] = [];
  const results: ContentPart[] = [];
  for (const part of parts) {
    if (isText(part)) content.push(textPart(part));
    else if (part.type === "reasoning" && typeof part.text === "string") {
      content.push({ type: "reasoning", text: part.text, ...providerOptionsOf(part) });
    } else if (part.type === "file") content.push(...fileParts(part, "assistant"));
    else {
      const tool = toolOf(part);
      if (tool === null) continue;
      content.push({
        type: "tool-call",
        toolCallId: tool.part.toolCallId,
        toolName: tool.name,
        input: tool.part.input,
        ...(tool.part.providerExecuted !== undefined ? { providerExecuted: tool.part.providerExecuted } : {}),
        ...(tool.part.callProviderMetadata ? { providerOptions: tool.part.callProviderMetadata } : {}),
      });
      const output = toolOutputOf(tool.part);
      if (output === null) continue;
      const result: ContentPart = {
        type: "tool-result",
        toolCallId: tool.part.toolCallId,
        toolName: tool.name,
        output,
        ...(tool.part.resultProviderMetadata ? { providerOptions: tool.part.resultProviderMetadata } : {}),
      };
      // A provider-executed result belongs to the assistant's own content, right after its call.
      if (tool.part.providerExecuted === true) content.push(result);
      else results.push(result);
    }
  }
  const messages: RunMessage[] = [];
  if (content.length > 0) messages.push({ role: "assistant", content, ...options } as RunMessage);
  if (results.length > 0) messages.push({ role: "tool", content: results } as RunMessage);
  return messages;
}

/** A tool part and its tool's name, or `null` for another part or a call still streaming its input. */
export function toolOf(part: SessionMessagePart): { name: string; part: ToolPart } | null {
  let name: string;
  if (part.type === "dynamic-tool" && typeof part.toolName === "string") name = part.toolName;
  else if (part.type.startsWith("tool-")) name = part.type.slice("tool-".length);
  else return null;
  if (typeof part.toolCallId !== "string" || part.state === "input-streaming") return null;
  return { name, part: part as ToolPart };
}

/** The model output a tool part stands for, or `null` when it has none yet. */
export function toolOutputOf(part: ToolPart): ToolResultOutput | null {
  if (part.modelOutput !== undefined) return part.modelOutput;
  switch (part.state) {
    case "output-available":
      return typeof part.output === "string"
        ? { type: "text", value: part.output }
        : { type: "json", value: (part.output ?? null) as never };
    case "output-error":
      return { type: "error-text", value: part.errorText ?? "" };
    case "output-denied":
      return {
        type: "execution-denied",
        ...(part.approval?.reason !== undefined ? { reason: part.approval.reason } : {}),
      };
    default:
      return null;
  }
}

type MessageOptions = { providerOptions?: ProviderOptions };

/** Message-level provider options travel in `metadata.providerOptions`. */
function messageOptions(message: SessionMessage): MessageOptions {
  const metadata = message.metadata as { providerOptions?: unknown } | undefined;
  const options = metadata?.providerOptions;
  return typeof options === "object" && options !== null
    ? { providerOptions: options as ProviderOptions }
    : {};
}

function providerOptionsOf(part: SessionMessagePart): MessageOptions {
  const metadata = (part as { providerMetadata?: ProviderOptions }).providerMetadata;
  return metadata ? { providerOptions: metadata } : {};
}

function isText(part: SessionMessagePart): part is SessionMessagePart & { text: string } {
  return part.type === "text" && typeof part.text === "string";
}

function textPart(part: SessionMessagePart & { text: string }): ContentPart {
  return { type: "text", text: part.text, ...providerOptionsOf(part) };
}

/**
 * A UI file part (`url`, a data URL or a link) as the model's file part (base64 text or a `URL`), its keys
 * in the order the SDK gives them for that role.
 */
function fileParts(part: SessionMessagePart, role: "user" | "assistant"): ContentPart[] {
  const file = part as { url?: unknown; mediaType?: unknown; filename?: unknown };
  if (typeof file.url !== "string" || typeof file.mediaType !== "string") return [];
  const data = fileData(file.url);
  if (data === null) return [];
  const filename = typeof file.filename === "string" ? { filename: file.filename } : {};
  const options = providerOptionsOf(part);
  const { mediaType } = file;
  return [
    role === "user"
      ? { type: "file", mediaType, ...filename, data, ...options }
      : { type: "file", data, ...filename, mediaType, ...options },
  ];
}

function fileData(url: string): string | URL | null {
  if (url.startsWith("data:")) {
    const comma = url.indexOf(",");
    if (comma === -1) return null;
    const header = url.slice(0, comma);
    const body = url.slice(comma + 1);
    return header.endsWith(";base64") ? body : base64OfText(decodeURIComponent(body));
  }
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function base64OfText(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A message stored as it was, when it is still one a model call takes: file data that was a link comes back as a `URL`. */
function reviveVerbatim(data: unknown, role: string): RunMessage | null {
  if (messageProblem(data) !== null || (data as RunMessage).role !== role) return null;
  const message = data as RunMessage;
  if (typeof message.content === "string") return message;
  const content = message.content.map((part) => {
    if (part.type !== "file" || typeof part.data !== "string" || !/^https?:\/\//.test(part.data)) return part;
    return { ...part, data: new URL(part.data) };
  });
  return { ...message, content } as RunMessage;
}
