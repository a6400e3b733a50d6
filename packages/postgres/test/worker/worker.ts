import { ContextBlocks } from "@contextblocks/core";
import pg from "pg";
import { PostgresContextProvider, PostgresSearchProvider } from "../../src/index.js";

interface Env {
  HYPERDRIVE: { connectionString: string };
}

/**
 * One agent's context on Postgres, per request: a `pg.Client` on Hyperdrive's connection string (Hyperdrive
 * pools the real connections, so a client per request is the recommended shape), the blocks of Cloudflare agents' Postgres example, and the
 * frozen prompt stored in Postgres too.
 *
 * GET  /prompt?agent=ID              the frozen system prompt
 * PUT  /memory?agent=ID   body       replaces the memory block
 * PUT  /knowledge?agent=ID&key=KEY   body: indexes one entry
 * GET  /search?agent=ID&q=QUERY      search_context's answer
 * POST /refresh?agent=ID             rebuilds the prompt
 */
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/") return new Response("ok");
    const agent = url.searchParams.get("agent") ?? "default";
    const client = new pg.Client({ connectionString: env.HYPERDRIVE.connectionString });
    await client.connect();
    try {
      const context = new ContextBlocks(
        [
          { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
          {
            label: "memory",
            description: "Short facts",
            maxTokens: 1100,
            provider: new PostgresContextProvider(client, `memory_${agent}`),
          },
          {
            label: "knowledge",
            description: "Searchable knowledge base",
            provider: new PostgresSearchProvider(client, { namespace: agent }),
          },
        ],
        new PostgresContextProvider(client, `_prompt_${agent}`),
      );
      const route = `${request.method} ${url.pathname}`;
      switch (route) {
        case "GET /prompt":
          return new Response(await context.freezeSystemPrompt());
        case "POST /refresh":
          return new Response(await context.refreshSystemPrompt());
        case "PUT /memory":
          await context.setBlock("memory", await request.text());
          return new Response("written");
        case "PUT /knowledge":
          await context.setEntry("knowledge", url.searchParams.get("key") ?? "", await request.text());
          return new Response("indexed");
        case "GET /search":
          return new Response((await context.search("knowledge", url.searchParams.get("q") ?? "")) ?? "");
        default:
          return new Response("not found", { status: 404 });
      }
    } catch (error) {
      return new Response(`Error: ${error instanceof Error ? error.message : String(error)}`, {
        status: 500,
      });
    } finally {
      await client.end();
    }
  },
};
