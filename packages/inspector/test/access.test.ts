import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { Session } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { describe, expect, it } from "vitest";
import { diffLines } from "../src/diff.js";
import { createInspector, RESTORE_HEADER } from "../src/index.js";

function setup(authorize?: (request: Request) => "read" | "write" | false) {
  const store = new InMemoryStore();
  // core's in-memory provider keeps versions (the `history` capability), so the page shows block history.
  const context = new ContextBlocks(
    [
      {
        label: "memory",
        description: "Facts",
        maxTokens: 200,
        provider: new InMemoryContextProvider({ store }),
      },
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
  );
  const session = new Session({ store: inMemoryBackend().messages("chat"), context });
  const inspector = createInspector({
    sessions: session,
    ...(authorize ? { authorize } : {}),
    basePath: "/inspect",
  });
  return { context, session, inspector };
}

const get = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://agent.test${path}`, { headers });

const restore = (body: unknown, headers: Record<string, string> = { [RESTORE_HEADER]: "restore" }) =>
  new Request("http://agent.test/inspect/restore", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

const byToken = (request: Request) => {
  const token = request.headers.get("authorization");
  return token === "Bearer writer" ? "write" : token === "Bearer reader" ? "read" : false;
};

describe("the inspector's access check", () => {
  it("without an authorize option lets no one in, on every route", async () => {
    const { context, inspector } = setup();
    await context.setBlock("memory", "secret: likes tea");
    for (const path of [
      "/inspect",
      "/inspect/",
      "/inspect/snapshot.json",
      "/inspect/events",
      "/inspect/app.js",
    ]) {
      const response = await inspector(get(path, { authorization: "Bearer writer" }));
      expect(response.status).toBe(403);
      expect(await response.text()).not.toContain("likes tea");
    }
    expect((await inspector(restore({ label: "memory", version: 1 }))).status).toBe(403);
  });

  it("refuses a request the host does not authorise, and serves only under its base path", async () => {
    const { context, inspector } = setup(byToken);
    await context.setBlock("memory", "secret: likes tea");
    const refused = await inspector(get("/inspect/"));
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("likes tea");
    expect((await inspector(get("/elsewhere", { authorization: "Bearer reader" }))).status).toBe(404);
    const page = await inspector(get("/inspect/", { authorization: "Bearer reader" }));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain("likes tea");
  });

  it("is read-only for read access: no restore button, and a restore is refused", async () => {
    const { context, inspector } = setup(byToken);
    await context.setBlock("memory", "v1");
    await context.setBlock("memory", "v2");
    const html = await (await inspector(get("/inspect/", { authorization: "Bearer reader" }))).text();
    expect(html).toContain("History: 2 versions");
    expect(html).not.toContain('class="restore"');
    const refused = await inspector(
      restore(
        { label: "memory", version: 1 },
        { authorization: "Bearer reader", [RESTORE_HEADER]: "restore" },
      ),
    );
    expect(refused.status).toBe(403);
    expect(context.getBlock("memory")?.content).toBe("v2");
  });

  it("restores a version for write access, only with the restore header", async () => {
    const { context, inspector } = setup(byToken);
    await context.setBlock("memory", "likes tea");
    await context.setBlock("memory", "likes coffee");
    const html = await (await inspector(get("/inspect/", { authorization: "Bearer writer" }))).text();
    expect(html).toContain('data-version="1">Restore v1</button>');
    const forged = await inspector(
      restore({ label: "memory", version: 1 }, { authorization: "Bearer writer" }),
    );
    expect(forged.status).toBe(403);
    const done = await inspector(
      restore(
        { label: "memory", version: 1 },
        { authorization: "Bearer writer", [RESTORE_HEADER]: "restore" },
      ),
    );
    expect(done.status).toBe(200);
    expect(context.getBlock("memory")?.content).toBe("likes tea");
  });

  it("refuses a restore body over 16 KiB with 413, restoring nothing", async () => {
    const { context, inspector } = setup(byToken);
    await context.setBlock("memory", "likes tea");
    await context.setBlock("memory", "likes coffee");
    const body = JSON.stringify({ label: "memory", version: 1, padding: "x".repeat(16 * 1024) });
    const headers = {
      authorization: "Bearer writer",
      "content-type": "application/json",
      [RESTORE_HEADER]: "restore",
    };
    // Declared (refused unread), and streamed without a length (refused while reading).
    const requests = [
      new Request("http://agent.test/inspect/restore", {
        method: "POST",
        headers: { ...headers, "content-length": String(body.length) },
        body,
      }),
      new Request("http://agent.test/inspect/restore", {
        method: "POST",
        headers,
        body: new Blob([body]).stream(),
        duplex: "half",
      } as RequestInit),
    ];
    for (const request of requests) {
      const refused = await inspector(request);
      expect(refused.status).toBe(413);
      expect(await refused.text()).toMatch(/16384 bytes/);
    }
    expect(context.getBlock("memory")?.content).toBe("likes coffee");
  });

  it("shows no history section for a block whose provider keeps no history", async () => {
    let stored = "";
    // A writable provider without the `history` capability.
    const provider = {
      get: async () => stored,
      set: async (content: string) => {
        stored = content;
      },
    };
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const inspector = createInspector({ context, authorize: () => "write" });
    await context.setBlock("memory", "plain");
    const html = await (await inspector(get("/"))).text();
    expect(html).toContain("plain");
    expect(html).not.toContain("History:");
    const refused = await inspector(
      new Request("http://agent.test/restore", {
        method: "POST",
        headers: { "content-type": "application/json", [RESTORE_HEADER]: "restore" },
        body: JSON.stringify({ label: "memory", version: 1 }),
      }),
    );
    expect(refused.status).toBe(501);
  });
});

describe("diffLines", () => {
  it("keeps common lines and marks removed and added ones", () => {
    expect(diffLines("a\nb\nc", "a\nc\nd")).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "b" },
      { kind: "same", text: "c" },
      { kind: "added", text: "d" },
    ]);
  });
});
