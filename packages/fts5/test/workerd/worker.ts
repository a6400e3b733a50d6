import { DurableObject } from "cloudflare:workers";

/** A Durable Object with SQLite storage; tests reach its storage through `runInDurableObject`. */
export class SearchObject extends DurableObject {}

export default {
  async fetch(): Promise<Response> {
    return new Response("fts5 test worker");
  },
};
