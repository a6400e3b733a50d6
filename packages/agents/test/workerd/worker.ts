import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "agents-context/lifecycle";
import { Sessions } from "agents-context/sessions";

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

/** A Durable Object that hosts agents@0.32.0's `agents/sessions` capability on a real Lifecycle. */
export class SessionsTestObject extends DurableObject {
  readonly sessions = new Sessions();
  readonly lifecycle = new Lifecycle(this).use(this.sessions);
}

export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks agents test worker");
  },
} satisfies ExportedHandler;
