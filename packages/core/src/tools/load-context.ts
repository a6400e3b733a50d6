import type { ContextBlocks } from "../context-blocks.js";
import {
  type ContextToolSpec,
  inputObject,
  labelField,
  quoteLabels,
  stringField,
  toolResult,
} from "./spec.js";

/** The labels of loadable blocks, and every label, for the two loadable tools. */
function loadableLabels(context: ContextBlocks): { labels: string[]; known: string[] } {
  const configs = context.getConfigs();
  return {
    labels: configs.filter((config) => config.kind === "loadable").map((config) => config.label),
    known: configs.map((config) => config.label),
  };
}

function keyedSchema(labelDescription: string) {
  return {
    type: "object",
    properties: {
      label: { type: "string", description: labelDescription },
      key: { type: "string", description: "Entry key, as listed in the block" },
    },
    required: ["label", "key"],
    additionalProperties: false,
  };
}

/** `load_context`: brings one entry of a loadable block into the conversation in full. */
export function loadContextTool(context: ContextBlocks): ContextToolSpec | null {
  const { labels, known } = loadableLabels(context);
  if (labels.length === 0) return null;
  const schema = keyedSchema("Loadable block label");
  (schema.properties.label as Record<string, unknown>).enum = labels;
  return {
    name: "load_context",
    description: `Load one entry of a loadable context block in full. Loadable blocks: ${quoteLabels(labels)}; each lists its entry keys with descriptions. Unload it with unload_context when it is no longer needed.`,
    inputSchema: schema,
    execute: (input) =>
      toolResult(async () => {
        const args = inputObject("load_context", input);
        const label = labelField("load_context", args, labels, known, "loadable");
        const key = stringField("load_context", args, "key");
        const content = await context.loadEntry(label, key);
        if (content === null)
          return `Error: no entry "${key}" in ${label}. Use a key listed in the ${label} block.`;
        return content;
      }),
  };
}

/** `unload_context`: drops a loaded entry from what the model sees on later turns. */
export function unloadContextTool(context: ContextBlocks): ContextToolSpec | null {
  const { labels, known } = loadableLabels(context);
  if (labels.length === 0) return null;
  const schema = keyedSchema("Loadable block label");
  (schema.properties.label as Record<string, unknown>).enum = labels;
  return {
    name: "unload_context",
    description: `Unload an entry loaded with load_context, so its text leaves the conversation on later turns. Loadable blocks: ${quoteLabels(labels)}.`,
    inputSchema: schema,
    execute: (input) =>
      toolResult(async () => {
        const args = inputObject("unload_context", input);
        const label = labelField("unload_context", args, labels, known, "loadable");
        const key = stringField("unload_context", args, "key");
        context.unloadEntry(label, key);
        return `Unloaded "${key}" from ${label}.`;
      }),
  };
}
