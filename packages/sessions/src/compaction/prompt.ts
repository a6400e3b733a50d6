import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import type { SessionMessage } from "../message.js";

/** Characters of one tool input or output quoted in the prompt: enough to know what happened. */
export const maximumToolCharacters = 500;

/** The summary's sections, in order: what the model is asked to write. */
export const summarySections = `## Topic
[What the conversation is about]

## Key Points
[Important information, decisions, and conclusions from the conversation]

## Current State
[Where things stand now — what has been done, what is in progress]

## Open Items
[Unresolved questions, pending tasks, or next steps discussed]`;

const closing = (budget: number) =>
  `Target ~${budget} tokens. Be factual — only include information that was explicitly discussed in the conversation. Do NOT invent file paths, commands, or details that were not mentioned. Write only the summary body.`;

/** One message as the summariser reads it: role, text, and each tool call with a clipped input and output. */
function transcriptOf(message: SessionMessage): string {
  const lines = [`[${message.role}]`];
  for (const part of message.parts) {
    if (part.type === "text" && typeof part.text === "string") lines.push(part.text);
    else if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
      const name = typeof part.toolName === "string" ? part.toolName : part.type.slice("tool-".length);
      lines.push(`[Tool: ${name || "unknown"}]`);
      if (part.input !== undefined) lines.push(`Input: ${clip(part.input)}`);
      if (part.output !== undefined) lines.push(`Output: ${clip(part.output)}`);
    }
  }
  return lines.join("\n");
}

function clip(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  // Cut between characters: a lone surrogate in the prompt is text some model APIs refuse as invalid JSON.
  return text.length > maximumToolCharacters ? `${wellFormedPrefix(text, maximumToolCharacters)}…` : text;
}

/**
 * The summariser's prompt: the messages to compress under the four sections (topic, key points, current
 * state, open items). With a previous summary, the model is asked to update it, not to start over.
 */
export function buildSummaryPrompt(
  messages: readonly SessionMessage[],
  previousSummary: string | null,
  budget: number,
): string {
  const content = messages.map(transcriptOf).join("\n\n---\n\n");
  if (previousSummary !== null) {
    return `You are updating a conversation summary. A previous summary exists below. New conversation turns have occurred since then and need to be incorporated.

PREVIOUS SUMMARY:
${previousSummary}

NEW TURNS TO INCORPORATE:
${content}

Update the summary. PRESERVE existing information that is still relevant. ADD new information. Remove information only if it is clearly obsolete.

${summarySections}

${closing(budget)}`;
  }
  return `Create a concise summary of this conversation that preserves the important information for future context.

CONVERSATION TO SUMMARIZE:
${content}

Use this structure:

${summarySections}

${closing(budget)}`;
}
