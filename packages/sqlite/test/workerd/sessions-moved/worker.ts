import { DurableObject } from "cloudflare:workers";
import { SqliteSessionProvider } from "../../src/index.js";

/**
 * A Durable Object with SQLite storage. Tests run sessions inside it with runInDurableObject; providers the
 * conformance suite drives live here, one per key, built on this object's own `ctx.storage`.
 */
export class SessionTestObject extends DurableObject {
  readonly #providers = new Map<string, SqliteSessionProvider>();

  provider(key: string, sessionId: string): SqliteSessionProvider {
    let provider = this.#providers.get(key);
    if (provider === undefined) {
      provider = new SqliteSessionProvider(this.ctx.storage, sessionId);
      this.#providers.set(key, provider);
    }
    return provider;
  }
}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks sessions test worker");
  },
} satisfies ExportedHandler;
