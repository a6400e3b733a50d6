import type { SessionMessage } from "@contextblocks/sessions";

/** A message as one readable line or a few: its text, and its tool calls as `→ tool input` / `← output`. */
export function messageText(message: SessionMessage): string {
  const lines: string[] = [];
  for (const part of message.parts) {
    if (part.type === "text" && typeof part.text === "string") lines.push(part.text);
    else if (part.type.startsWith("tool-")) {
      const tool = part.type.slice("tool-".length);
      lines.push(`→ ${tool} ${JSON.stringify(part.input)}`);
      const errorText = (part as { errorText?: unknown }).errorText;
      if (part.state === "output-available") lines.push(`← ${tool}: ${outputText(part.output)}`);
      else if (typeof errorText === "string") lines.push(`← ${tool} failed: ${errorText}`);
    }
  }
  return lines.join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const text = (output as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : JSON.stringify(output);
}
