import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createInspector, RESTORE_HEADER } from "../src/index.js";

// A restore's status says whose fault a failure is: the request's (4xx, the client can fix it) or the
// store's (5xx), as the rest of the inspector's routes do.

function setup() {
  const database = new Database(":memory:");
  const session = new SessionBuilder(sqliteBackend(database))
    .forSession("chat")
    .withContext("memory", { maxTokens: 50 })
    .build();
  const inspector = createInspector({ sessions: session, authorize: () => "write" });
  return { database, context: session.context, inspector };
}

const restore = (body: string) =>
  new Request("http://agent.test/restore", {
    method: "POST",
    headers: { "content-type": "application/json", [RESTORE_HEADER]: "restore" },
    body,
  });

describe("POST /restore", () => {
  it("answers a bad request with 4xx naming the problem, and restores nothing", async () => {
    const { context, inspector } = setup();
    await context.setBlock("memory", "likes tea");
    await context.setBlock("memory", "likes coffee");
    const cases: [string, number, RegExp][] = [
      ['{"label":"nope","version":1}', 404, /Block "nope" not found/],
      ['{"label":"__proto__","version":1}', 404, /Block "__proto__" not found/],
      ['{"label":"memory","version":99}', 404, /no version 99/],
      ['{"label":"memory","version":0}', 400, /version/],
      ['{"label":"memory","version":1e300}', 400, /version/],
      ['{"label":"memory","version":"1"}', 400, /Expected \{ label: string, version: integer \}/],
      ["null", 400, /Expected/],
      ["[]", 400, /Expected/],
      ["{", 400, /must be JSON/],
    ];
    for (const [body, status, message] of cases) {
      const response = await inspector(restore(body));
      expect({ body, status: response.status }).toEqual({ body, status });
      expect(await response.text(), body).toMatch(message);
    }
    expect(context.getBlock("memory")?.content).toBe("likes coffee");
  });

  it("answers a store that fails with 500, not as the client's mistake", async () => {
    const { database, context, inspector } = setup();
    await context.setBlock("memory", "likes tea");
    await context.setBlock("memory", "likes coffee");
    database.close();
    const response = await inspector(restore('{"label":"memory","version":1}'));
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/^The inspector failed: .*database connection is not open/);
  });
});
