import { DurableObject } from "cloudflare:workers";

/** A Durable Object with SQLite storage; tests run sessions inside it with runInDurableObject. */
export class SessionTestObject extends DurableObject {}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks sessions test worker");
  },
} satisfies ExportedHandler;
