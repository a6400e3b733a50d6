import { env, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import type { AgentObject } from "../../src/agent-object.js";
import type { AgentSnapshot, ChatResult, CreatedSession, RefreshResult } from "../../src/snapshot.js";

const ORIGIN = "http://agent.test";

/** A request to the Worker, as a client would send it. */
export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${ORIGIN}${path}`, init));
}

function postJson(path: string, body: unknown, method = "POST"): Promise<Response> {
  return call(path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function expectOk(response: Response): Promise<Response> {
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response;
}

export async function prompt(agent: string): Promise<string> {
  return (await expectOk(await call(`/agents/${agent}/prompt`))).text();
}

export async function chat(agent: string, message: string, session?: string): Promise<ChatResult> {
  const body = session === undefined ? { message } : { message, session };
  return (await expectOk(await postJson(`/agents/${agent}/chat`, body))).json();
}

/** `POST /agents/:id/edit`: the new text of a user message, stored beside it (a new branch). */
export async function edit(agent: string, messageId: string, message: string): Promise<ChatResult> {
  return (await expectOk(await postJson(`/agents/${agent}/edit`, { messageId, message }))).json();
}

export async function createSession(agent: string, name?: string): Promise<CreatedSession> {
  return (
    await expectOk(await postJson(`/agents/${agent}/sessions`, name === undefined ? {} : { name }))
  ).json();
}

export async function snapshot(agent: string): Promise<AgentSnapshot> {
  return (await expectOk(await call(`/agents/${agent}/blocks`))).json();
}

export async function refresh(agent: string): Promise<RefreshResult> {
  return (await expectOk(await call(`/agents/${agent}/refresh`, { method: "POST" }))).json();
}

export async function setDate(agent: string, date: string | null): Promise<void> {
  await expectOk(await postJson(`/agents/${agent}/date`, { date }, "PUT"));
}

export function stub(agent: string): DurableObjectStub<AgentObject> {
  return env.AGENT.getByName(agent);
}

/** Every row of every table of the agent's SQLite database (runtime-internal tables aside), for equality. */
export function dumpStorage(agent: string): Promise<Record<string, unknown[]>> {
  return runInDurableObject(stub(agent), (_instance, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .toArray();
    const dump: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      dump[name] = state.storage.sql
        .exec(`SELECT * FROM "${name.replaceAll('"', '""')}"`)
        .toArray()
        .map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([column, value]) => [
              column,
              value instanceof ArrayBuffer ? [...new Uint8Array(value)].join(",") : value,
            ]),
          ),
        );
    }
    return dump;
  });
}

/** The next day after `date` (`YYYY-MM-DD`). */
export function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

/** The agent's inspector page (`@contextblocks/inspector`), with the token the test Worker is configured with. */
export async function inspectorHtml(agent: string): Promise<string> {
  const page = await expectOk(
    await call(`/agents/${agent}/inspector/`, { headers: { authorization: "Bearer test-inspector-token" } }),
  );
  return page.text();
}
