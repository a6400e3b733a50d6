import type { RunStateStore, RunStates } from "../run-state.js";
import { checkRunStateSessionId, runStateRows } from "../store-arguments.js";

const owner = "InMemoryRunStateStore";

/**
 * A `RunStateStore` in a `Map`, kept as JSON text: what is saved is a copy (later changes to the objects do
 * not leak in), and what a SQL store refuses (an empty session id, a state that is not an object or that JSON
 * cannot hold: a cycle, a `BigInt`) is refused here too, before anything is kept.
 * Share one instance between pipelines to model a restart.
 */
export class InMemoryRunStateStore implements RunStateStore {
  readonly #sessions = new Map<string, string>();

  async load(sessionId: string): Promise<RunStates | null> {
    checkRunStateSessionId(sessionId, "load", owner);
    const json = this.#sessions.get(sessionId);
    return json === undefined ? null : (JSON.parse(json) as RunStates);
  }

  async save(sessionId: string, states: RunStates): Promise<void> {
    checkRunStateSessionId(sessionId, "save", owner);
    const rows = runStateRows(states, owner);
    // JSON.parse keeps a source id "__proto__" as a key like any other, never the object's prototype.
    const entries = rows.map(({ sourceId, json }) => `${JSON.stringify(sourceId)}:${json}`);
    this.#sessions.set(sessionId, `{${entries.join(",")}}`);
  }

  async delete(sessionId: string): Promise<void> {
    checkRunStateSessionId(sessionId, "delete", owner);
    this.#sessions.delete(sessionId);
  }
}
