import type { ContextBlocks } from "../context-blocks.js";
import {
  type ContextToolSpec,
  inputObject,
  labelField,
  quoteLabels,
  stringField,
  toolResult,
} from "./spec.js";

/** `search_context`: ranked matches from a searchable block. */
export function searchContextTool(context: ContextBlocks): ContextToolSpec | null {
  const configs = context.getConfigs();
  const labels = configs.filter((config) => config.kind === "searchable").map((config) => config.label);
  if (labels.length === 0) return null;
  const known = configs.map((config) => config.label);
  return {
    name: "search_context",
    description: `Search for information in a searchable context block. ONLY these blocks are searchable: ${quoteLabels(labels)}. Other blocks cannot be searched.`,
    inputSchema: {
      type: "object",
      properties: {
        label: { type: "string", enum: labels, description: "Searchable block label" },
        query: { type: "string", description: "Search query" },
      },
      required: ["label", "query"],
      additionalProperties: false,
    },
    execute: (input) =>
      toolResult(async () => {
        const args = inputObject("search_context", input);
        const label = labelField("search_context", args, labels, known, "searchable");
        const query = stringField("search_context", args, "query");
        if (query.trim().length === 0) return 'Error: search_context: "query" is empty; say what to look for';
        return (await context.search(label, query)) ?? "No results found.";
      }),
  };
}
