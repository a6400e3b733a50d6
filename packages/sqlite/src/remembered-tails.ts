import type { SqlClient } from "@contextblocks/sql";

/**
 * The latest leaf each client remembers per session (the lean and keyed layouts' tails), kept as long as
 * the client lives; setting `undefined` forgets it.
 */
export class RememberedTails<Tail> {
  readonly #byClient = new WeakMap<SqlClient, Map<string, Tail>>();

  get(client: SqlClient, sessionId: string): Tail | undefined {
    return this.#byClient.get(client)?.get(sessionId);
  }

  set(client: SqlClient, sessionId: string, tail: Tail | undefined): void {
    let sessions = this.#byClient.get(client);
    if (tail === undefined) {
      sessions?.delete(sessionId);
      return;
    }
    if (sessions === undefined) {
      sessions = new Map();
      this.#byClient.set(client, sessions);
    }
    sessions.set(sessionId, tail);
  }
}
