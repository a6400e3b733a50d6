import { neutralizeContent } from "@contextblocks/core/store-kit";
import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, isUIMessage } from "./messages.js";

/**
 * The messages with every rule line in a tool's text result written with `=` first, as a user's text is
 * (`withUserSectionsNeutralized`): any tool, not only ours, may hand back text someone else wrote (a fetched
 * page, a file, a shared skill), and a line opening with `═` between two others reads to the model as a section
 * of the system prompt or of the reminder. Text results (`text`, `error-text`, the text items of `content`) and
 * a UI tool part's text output or error are read; a JSON result reaches the model serialized, its line breaks
 * escaped, so it cannot open a line. A message without such a line is returned as it is (the same object).
 */
export function withToolResultSectionsNeutralized<M extends ContextMessage>(messages: readonly M[]): M[] {
  return messages.map((message) => {
    if (message.role !== "tool" && message.role !== "assistant") return message;
    return (isUIMessage(message) ? neutralizedUI(message) : neutralizedModel(message)) as M;
  });
}

type Output = { type?: unknown; value?: unknown };

function neutralizedModel(message: ModelMessage): ModelMessage {
  if (!Array.isArray(message.content)) return message;
  let changed = false;
  const content = (message.content as readonly unknown[]).map((part) => {
    if (typeof part !== "object" || part === null) return part;
    const { type, output } = part as { type?: unknown; output?: unknown };
    if (type !== "tool-result" || typeof output !== "object" || output === null) return part;
    const neutral = neutralizedOutput(output as Output);
    if (neutral === output) return part;
    changed = true;
    return { ...part, output: neutral };
  });
  return changed ? ({ ...message, content } as ModelMessage) : message;
}

/** A tool result's output with its text neutralized; the same object when nothing changed. */
function neutralizedOutput(output: Output): Output {
  if ((output.type === "text" || output.type === "error-text") && typeof output.value === "string") {
    const value = neutralizeContent(output.value);
    return value === output.value ? output : { ...output, value };
  }
  if (output.type === "content" && Array.isArray(output.value)) {
    let changed = false;
    const value = output.value.map((item: unknown) => {
      const text = (item as { type?: unknown; text?: unknown } | null)?.text;
      if ((item as { type?: unknown } | null)?.type !== "text" || typeof text !== "string") return item;
      const neutral = neutralizeContent(text);
      if (neutral === text) return item;
      changed = true;
      return { ...(item as object), text: neutral };
    });
    return changed ? { ...output, value } : output;
  }
  return output;
}

function neutralizedUI(message: UIMessage): UIMessage {
  let changed = false;
  const parts = message.parts.map((part) => {
    if (typeof part !== "object" || part === null) return part;
    const { type, output, errorText } = part as { type?: unknown; output?: unknown; errorText?: unknown };
    if (typeof type !== "string" || !(type.startsWith("tool-") || type === "dynamic-tool")) return part;
    let next = part as Record<string, unknown>;
    if (typeof output === "string" && neutralizeContent(output) !== output) {
      next = { ...next, output: neutralizeContent(output) };
    }
    if (typeof errorText === "string" && neutralizeContent(errorText) !== errorText) {
      next = { ...next, errorText: neutralizeContent(errorText) };
    }
    if (next === part) return part;
    changed = true;
    return next as typeof part;
  });
  return changed ? { ...message, parts } : message;
}
