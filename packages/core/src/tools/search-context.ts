import { ContextError } from "../errors.js";
import { neutralizeContent } from "../render.js";
import { type FieldTable, type InputOf, inputSchema, readInput } from "./fields.js";
import type { ToolHost } from "./host.js";
import { type ContextToolSpec, checkToolLabel, quoteLabels, toolOutcome } from "./spec.js";

/** `search_context` arguments. */
export const SEARCH_FIELDS = {
  label: { type: "string", required: true, description: "Searchable block label" },
  query: { type: "string", required: true, description: "Search query" },
} as const satisfies FieldTable;

export type SearchContextInput = InputOf<typeof SEARCH_FIELDS>;

/** `search_context`: ranked matches from a searchable block. */
export function searchContextTool(host: ToolHost): ContextToolSpec | null {
  const configs = host.getConfigs();
  const labels = configs.filter((config) => config.kind === "searchable").map((config) => config.label);
  if (labels.length === 0) return null;
  const known = configs.map((config) => config.label);
  const fields = { ...SEARCH_FIELDS, label: { ...SEARCH_FIELDS.label, enum: labels } };
  return {
    name: "search_context",
    description: `Search for information in a searchable context block. ONLY these blocks are searchable: ${quoteLabels(labels)}. Other blocks cannot be searched.`,
    inputSchema: inputSchema(fields),
    execute: (input) =>
      toolOutcome(async () => {
        const args = readInput("search_context", fields, input);
        const label = checkToolLabel(args.label, labels, known, "searchable");
        if (args.query.trim().length === 0) {
          throw new ContextError("INVALID_INPUT", 'search_context: "query" is empty; say what to look for');
        }
        const found = await host.search(label, args.query);
        // Matches quote stored text: none of its lines may open with the prompt's rule (see load_context).
        return found === null ? "No results found." : neutralizeContent(found);
      }),
  };
}
