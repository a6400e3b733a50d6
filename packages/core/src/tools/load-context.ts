import { clipped } from "../describe-value.js";
import { ContextError } from "../errors.js";
import { neutralizeContent } from "../render.js";
import { type FieldTable, type InputOf, inputSchema, readInput } from "./fields.js";
import type { ToolHost } from "./host.js";
import { type ContextToolSpec, checkToolLabel, quoteLabels, toolOutcome } from "./spec.js";

/** `load_context` and `unload_context` arguments. */
export const ENTRY_FIELDS = {
  label: { type: "string", required: true, description: "Loadable block label" },
  key: { type: "string", required: true, description: "Entry key, as listed in the block" },
} as const satisfies FieldTable;

export type EntryInput = InputOf<typeof ENTRY_FIELDS>;

/** The labels of loadable blocks, every label, and the fields with the label enum filled in. */
function loadable(host: ToolHost) {
  const configs = host.getConfigs();
  const labels = configs.filter((config) => config.kind === "loadable").map((config) => config.label);
  const fields = { ...ENTRY_FIELDS, label: { ...ENTRY_FIELDS.label, enum: labels } };
  return { labels, known: configs.map((config) => config.label), fields };
}

/** `load_context`: brings one entry of a loadable block into the conversation in full. */
export function loadContextTool(host: ToolHost): ContextToolSpec | null {
  const { labels, known, fields } = loadable(host);
  if (labels.length === 0) return null;
  return {
    name: "load_context",
    description: `Load one entry of a loadable context block in full. Loadable blocks: ${quoteLabels(labels)}; each lists its entry keys with descriptions. Unload it with unload_context when it is no longer needed.`,
    inputSchema: inputSchema(fields),
    execute: (input) =>
      toolOutcome(async () => {
        const args = readInput("load_context", fields, input);
        const label = checkToolLabel(args.label, labels, known, "loadable");
        const content = await host.loadEntry(label, args.key);
        if (content === null) {
          throw new ContextError(
            "NOT_FOUND",
            // "Not found" / "not currently loaded": the words agents' tool answers use, which its users match on.
            `no entry "${clipped(args.key)}" in ${label}. Not found: use a key listed in the ${label} block.`,
            { label },
          );
        }
        // An entry may be written by someone else (a skill from a shared bucket): a line of it that opens
        // with the prompt's rule would read as a section of the system prompt or the reminder.
        return neutralizeContent(content);
      }),
  };
}

/** `unload_context`: drops a loaded entry from what the model sees on later turns. */
export function unloadContextTool(host: ToolHost): ContextToolSpec | null {
  const { labels, known, fields } = loadable(host);
  if (labels.length === 0) return null;
  return {
    name: "unload_context",
    description: `Unload an entry loaded with load_context, so its text leaves the conversation on later turns. Loadable blocks: ${quoteLabels(labels)}.`,
    inputSchema: inputSchema(fields),
    execute: (input) =>
      toolOutcome(async () => {
        const args = readInput("unload_context", fields, input);
        const label = checkToolLabel(args.label, labels, known, "loadable");
        if (!host.unloadEntry(label, args.key)) {
          throw new ContextError(
            "NOT_FOUND",
            `"${clipped(args.key)}" from ${label} is not currently loaded, so there is nothing to unload. Load it with load_context first, or leave it.`,
            { label },
          );
        }
        return `Unloaded "${args.key}" from ${label}.`;
      }),
  };
}
