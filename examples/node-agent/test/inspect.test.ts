import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { NodeAgent } from "../src/agent.js";
import { type InspectorServer, startInspector } from "../src/inspect.js";

let directory = "";
let agent: NodeAgent | undefined;
let server: InspectorServer | undefined;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "node-agent-inspect-"));
});
afterEach(async () => {
  await server?.close();
  agent?.close();
  rmSync(directory, { recursive: true, force: true });
});

it("mounts @contextblocks/inspector on the agent's session: nothing without the token, the memory with it", async () => {
  agent = await NodeAgent.open(join(directory, "agent.db"));
  await agent.chat("Remember that I prefer TypeScript and short answers.");
  server = await startInspector(agent, { token: "a-test-token" });
  const base = server.url.slice(0, server.url.indexOf("?"));

  const refused = await fetch(base);
  expect(refused.status).toBe(401);
  expect(await refused.text()).not.toContain("TypeScript");
  expect((await fetch(`${base}events`)).status).toBe(401);

  const page = await fetch(base, { headers: { authorization: "Bearer a-test-token" } });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("TypeScript");
  expect(html).toMatch(/data-sha256="[0-9a-f]{64}"/);
  expect(html).toContain('class="session-tree"');

  // The first visit trades the query token for a cookie (what the event stream sends).
  const visit = await fetch(server.url, { redirect: "manual" });
  expect(visit.status).toBe(303);
  const cookie = (visit.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  expect(cookie).toBe("contextblocks_inspector=a-test-token");
  const stream = await fetch(`${base}events`, { headers: { cookie } });
  expect(stream.headers.get("content-type")).toContain("text/event-stream");
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let received = decoder.decode((await reader.read()).value);
  const turn = agent.chat("Remember that I deploy on Fridays.");
  // The turn's reminder (the memory written by the first chat, not in the frozen prompt yet) comes first.
  while (!received.includes('"type":"block-written"'))
    received += decoder.decode((await reader.read()).value);
  await turn;
  await reader.cancel();
  expect(received.indexOf('"type":"reminder-sent"')).toBeGreaterThan(-1);
  expect(received.indexOf('"type":"reminder-sent"')).toBeLessThan(received.indexOf('"type":"block-written"'));
});
