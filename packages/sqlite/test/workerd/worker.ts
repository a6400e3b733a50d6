import { DurableObject } from "cloudflare:workers";
import { SqliteContextProvider, SqliteSessionStore } from "../../src/index.js";
import type { NewSessionLayout, SqliteContextProviderOptions } from "../../src/store-kit.js";

/**
 * A Durable Object with SQLite storage. Tests run code inside it with runInDurableObject; providers the
 * conformance suite drives live here, one per id, built on this object's own `ctx.storage`.
 */
export class ContextTestObject extends DurableObject {
  readonly #providers = new Map<string, SqliteContextProvider>();

  provider(id: string, options: SqliteContextProviderOptions): SqliteContextProvider {
    let provider = this.#providers.get(id);
    if (provider === undefined) {
      provider = new SqliteContextProvider(this.ctx.storage, options);
      this.#providers.set(id, provider);
    }
    return provider;
  }

  readonly #stores = new Map<string, SqliteSessionStore>();

  /** A session store the session conformance suite drives, one per key. */
  sessionStore(key: string, sessionId: string, newDatabaseLayout?: NewSessionLayout): SqliteSessionStore {
    let store = this.#stores.get(key);
    if (store === undefined) {
      store = new SqliteSessionStore(this.ctx.storage, { sessionId, newDatabaseLayout });
      this.#stores.set(key, store);
    }
    return store;
  }
}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks sqlite test worker");
  },
} satisfies ExportedHandler;
