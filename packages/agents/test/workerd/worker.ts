import { DurableObject } from "cloudflare:workers";

/**
 * A Durable Object with SQLite storage, shaped like an agents `Agent` for its Sessions API: `sql` is a
 * synchronous tagged template over `ctx.storage.sql`, as agents' `Agent.sql` is.
 */
export class AgentTestObject extends DurableObject {
  sql<T = Record<string, string | number | boolean | null>>(
    strings: TemplateStringsArray,
    ...values: (string | number | boolean | null)[]
  ): T[] {
    return [...this.ctx.storage.sql.exec(strings.join("?"), ...values)] as T[];
  }
}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks agents test worker");
  },
} satisfies ExportedHandler;
