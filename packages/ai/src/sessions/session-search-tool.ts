import { formatSearchResults, type SessionManager } from "@contextblocks/sessions";
import { type Tool, tool } from "ai";
import { z } from "zod";

/**
 * `session_search`: the model searches past conversations, across every session of the manager's
 * backend. Failures come back as `Error: …` text; nothing is thrown into the loop.
 *
 * ```ts
 * const tools = { ...contextTools(session.context), ...sessionSearchTool(manager) };
 * ```
 */
export function sessionSearchTool(manager: SessionManager): {
  session_search: Tool<{ query: string }, string>;
} {
  return {
    session_search: tool({
      description: "Search past conversations for relevant context. Searches across all sessions.",
      inputSchema: z.object({ query: z.string().describe("Search query") }),
      execute: async ({ query }) => {
        try {
          return formatSearchResults(await manager.search(query, { limit: 10 })) ?? "No results found.";
        } catch (error) {
          return `Error: ${error instanceof Error ? error.message : String(error)}`;
        }
      },
    }),
  };
}
