import { describeValue, errorMessage } from "@contextblocks/core/store-kit";
import type { SessionManager } from "@contextblocks/sessions";
import { type JSONSchema7, type Tool, tool } from "ai";
import { isReplacedToolInput, replacedToolInputMessage, toolInputSchema } from "../tool-input.js";
import { checkExcerptOptions, type SearchExcerptOptions, searchExcerpts } from "./search-excerpts.js";

// The JSON Schema the model sees, as the zod schema `z.object({ query: z.string().describe(…) })` this tool
// had wrote it: the tool definition, part of the cached prefix, stays byte for byte the same.
const inputSchema: JSONSchema7 = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { query: { type: "string", description: "Search query" } },
  required: ["query"],
  additionalProperties: false,
};

/** The query a call carries, or what the model reads when its arguments are not `{ query: string }`. */
function queryOf(input: unknown): { query: string } | { refusal: string } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { refusal: `session_search expects an object of arguments, got ${describeValue(input)}` };
  }
  const query = Object.hasOwn(input, "query") ? (input as { query?: unknown }).query : undefined;
  if (query === undefined || query === null) return { refusal: 'session_search: "query" is required' };
  if (typeof query !== "string") {
    return { refusal: `session_search: "query" must be a string, got ${describeValue(query)}` };
  }
  if (query.trim().length === 0) return { refusal: 'session_search: "query" is empty; say what to look for' };
  return { query };
}

/**
 * `session_search`: the model searches past conversations, across every session of the manager's
 * backend. Each hit comes with the turns around it (its parent and first child on its branch) under its day,
 * the whole result within `maxTokens` (default 300: what ten one-line hits cost before; search-excerpts.ts).
 * Failures come back as `Error: …` text (an empty query, and arguments missing or of the wrong type, which
 * the SDK does not check here: it would answer them with a tool error); nothing is thrown into the loop.
 *
 * ```ts
 * const tools = { ...contextTools(session.context), ...sessionSearchTool(manager) };
 * ```
 */
export function sessionSearchTool(
  manager: SessionManager,
  options: SearchExcerptOptions = {},
): {
  session_search: Tool<{ query: string }, string>;
} {
  // Refused here, where the tool is built, rather than on every call the model makes.
  checkExcerptOptions(options, "sessionSearchTool");
  return {
    session_search: tool({
      description:
        "Search past conversations for relevant context. Searches across all sessions; each hit (marked >) comes with the turns around it.",
      inputSchema: toolInputSchema<{ query: string }>(inputSchema),
      execute: async (input: unknown) => {
        if (isReplacedToolInput(input)) return replacedToolInputMessage("session_search");
        const checked = queryOf(input);
        if ("refusal" in checked) return `Error: ${checked.refusal}`;
        try {
          return (await searchExcerpts(manager, checked.query, options)).text ?? "No results found.";
        } catch (error) {
          return `Error: ${errorMessage(error)}`;
        }
      },
    }),
  };
}
