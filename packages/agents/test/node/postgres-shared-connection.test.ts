// agents' Postgres providers sharing one PostgresConnection (as an Agent shares its one connection): a
// transaction one provider runs must never take in another provider's statements.
import {
  type PostgresConnection,
  PostgresSessionProvider,
  Session,
} from "@contextblocks/agents/experimental/memory/session";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: ThrowawayCluster;
let client: pg.Client;
beforeAll(async () => {
  cluster = await startThrowawayCluster();
  client = new pg.Client({ connectionString: cluster.connectionString });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  cluster?.stop();
});

/** One connection, logging each statement with its arguments, and yielding between statements as a network does. */
function loggingConnection(log: { query: string; args: unknown[] }[]): PostgresConnection {
  return {
    async execute(query, args = []) {
      log.push({ query, args });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
      let index = 0;
      const result = await client.query(
        query.replace(/\?/g, () => `$${++index}`),
        args,
      );
      return { rows: result.rows };
    },
  };
}

const text = (id: string, body: string) => ({ id, role: "user", parts: [{ type: "text", text: body }] });

describe("agents' Postgres providers on one shared connection", () => {
  it("run one provider's transaction without another provider's statements inside it", async () => {
    const log: { query: string; args: unknown[] }[] = [];
    const connection = loggingConnection(log);
    const one = new Session(new PostgresSessionProvider(connection, "shared-one"));
    const two = new Session(new PostgresSessionProvider(connection, "shared-two"));
    await one.appendMessage(text("one-root", "first"));
    await two.appendMessage(text("two-root", "first"));
    log.length = 0;
    await Promise.all([
      ...Array.from({ length: 6 }, (_, index) => one.updateMessage(text("one-root", `edit ${index}`))),
      ...Array.from({ length: 6 }, (_, index) => two.appendMessage(text(`two-${index}`, `reply ${index}`))),
    ]);
    let open: string | null = null;
    const intruders: string[] = [];
    for (const { query, args } of log) {
      if (/^\s*BEGIN/i.test(query)) open = "one";
      else if (/^\s*(COMMIT|ROLLBACK)/i.test(query)) open = null;
      else if (open !== null && args.includes("shared-two")) intruders.push(query.slice(0, 60));
    }
    expect(log.some(({ query }) => /^\s*BEGIN/i.test(query))).toBe(true);
    expect(intruders).toEqual([]);
    expect((await two.getHistory()).map((message) => message.id)).toHaveLength(7);
  });
});
