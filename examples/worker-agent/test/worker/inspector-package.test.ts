import { describe, expect, it } from "vitest";
import { call, chat } from "./helpers.js";

const TOKEN = "test-inspector-token";

describe("/agents/:id/inspector (@contextblocks/inspector in the agent's Durable Object)", () => {
  it("lets no one in without the token, on the page and on its event stream", async () => {
    await chat("inspected", "Remember that I prefer TypeScript.");
    for (const path of ["/agents/inspected/inspector/", "/agents/inspected/inspector/events"]) {
      const refused = await call(path);
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toContain("TypeScript");
      const wrong = await call(path, { headers: { authorization: "Bearer wrong" } });
      expect(wrong.status).toBe(401);
    }
  });

  it("shows the agent's blocks, its prompt hash and its conversations with the token", async () => {
    await chat("inspected-2", "Remember that I prefer TypeScript.");
    const page = await call("/agents/inspected-2/inspector/", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<title>Agent inspected-2 · contextblocks inspector</title>");
    expect(html).toMatch(/data-sha256="[0-9a-f]{64}"/);
    expect(html).toContain('data-label="memory"');
    expect(html).toContain("TypeScript");
    expect(html).toContain('class="session-tree"');
    // Read-only: restoring is refused even with the token.
    const restore = await call("/agents/inspected-2/inspector/restore", {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        "x-contextblocks-inspector": "restore",
      },
      body: JSON.stringify({ label: "memory", version: 1 }),
    });
    expect(restore.status).toBe(403);
  });

  it("streams lifecycle events to an open page (Server-Sent Events)", async () => {
    await chat("inspected-3", "Hello.");
    const stream = await call("/agents/inspected-3/inspector/events", {
      headers: { cookie: `contextblocks_inspector=${TOKEN}` },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = decoder.decode((await reader.read()).value);
    const turn = chat("inspected-3", "Remember that I deploy on Fridays.");
    while (!received.includes("event: lifecycle")) received += decoder.decode((await reader.read()).value);
    await turn;
    await reader.cancel();
    expect(received).toContain('"type":"block-written"');
    expect(received).toContain('"source":{"kind":"tool"');
  });
});
