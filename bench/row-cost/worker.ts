import { DurableObject } from "cloudflare:workers";

/** A Durable Object with SQLite storage; the row-cost test reaches its storage through runInDurableObject. */
export class RowCostObject extends DurableObject {}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks bench: row cost");
  },
} satisfies ExportedHandler;
