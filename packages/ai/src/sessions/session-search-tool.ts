import { errorMessage } from "@contextblocks/core/store-kit";
import type { SessionManager } from "@contextblocks/sessions";
import { type Tool, tool } from "ai";
import { z } from "zod";
import { type SearchExcerptOptions, searchExcerpts } from "./search-excerpts.js";

/**
 * `session_search`: the model searches past conversations, across every session of the manager's
 * backend. Each hit comes with the turns around it (its parent and first child on its branch) under its day,
 * the whole result within `maxTokens` (default 300: what ten one-line hits cost before; search-excerpts.ts).
 * Failures come back as `Error: …` text (an empty query too); nothing is thrown into the loop. Arguments of
 * the wrong type are refused by the AI SDK's own input validation, which the model reads as a tool error.
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
  return {
    session_search: tool({
      description:
        "Search past conversations for relevant context. Searches across all sessions; each hit (marked >) comes with the turns around it.",
      inputSchema: z.object({ query: z.string().describe("Search query") }),
      execute: async ({ query }) => {
        if (query.trim().length === 0) return 'Error: session_search: "query" is empty; say what to look for';
        try {
          return (await searchExcerpts(manager, query, options)).text ?? "No results found.";
        } catch (error) {
          return `Error: ${errorMessage(error)}`;
        }
      },
    }),
  };
}
