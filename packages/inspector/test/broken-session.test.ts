import {
  type ListSessionsOptions,
  SessionBuilder,
  type SessionInfo,
  SessionManager,
  type SessionMessage,
} from "@contextblocks/sessions";
import { InMemorySessionRegistry, inMemoryBackend } from "@contextblocks/sessions/memory";
import { sqliteBackend } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createInspector } from "../src/index.js";
import type { InspectorSnapshot } from "../src/snapshot.js";

const message = (id: string, text: string): SessionMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

async function load(inspector: (request: Request) => Promise<Response>) {
  const page = await inspector(new Request("http://agent.test/"));
  const json = await inspector(new Request("http://agent.test/snapshot.json"));
  return { page, html: await page.text(), json, snapshot: (await json.json()) as InspectorSnapshot };
}

/** A manager one of whose sessions cannot be opened: `getSession` throws `message`. */
class ManagerWithAnUnopenableSession extends SessionManager {
  unopenable = "";
  message = "";
  override getSession(sessionId: string) {
    if (sessionId === this.unopenable) throw new Error(this.message);
    return super.getSession(sessionId);
  }
}

describe("a session that cannot be read", () => {
  it("is shown with its error beside every other session, on the page and in the snapshot", async () => {
    const database = new Database(":memory:");
    const manager = new SessionManager(sqliteBackend(database));
    const first = await manager.create("First chat");
    await manager.getSession(first.id).appendMessage(message("f1", "Deploy on Fridays."));
    const broken = await manager.create("Broken chat");
    await manager.getSession(broken.id).appendMessage(message("b1", "About to be broken."));
    const last = await manager.create("Last chat");
    await manager.getSession(last.id).appendMessage(message("l1", "Hotfixes any day."));
    // Another client wrote this session's message in a shape the tree cannot show.
    const badShape = JSON.stringify({ id: "b1", role: "user", parts: [null] });
    expect(
      database.prepare("UPDATE assistant_messages SET content = ? WHERE id = ?").run(badShape, "b1").changes,
    ).toBe(1);

    const inspector = createInspector({ sessions: manager, authorize: () => "read" });
    const { page, html, json, snapshot } = await load(inspector);
    expect(page.status).toBe(200);
    expect(json.status).toBe(200);
    expect(snapshot.sessions.map((session) => [session.name, session.error === null])).toEqual([
      ["Last chat", true],
      ["Broken chat", false],
      ["First chat", true],
    ]);
    expect(snapshot.sessions[1]).toMatchObject({
      id: broken.id,
      tree: [],
      compactions: [],
      storedMessages: 0,
    });
    expect(snapshot.sessions[1]?.error).toMatch(/null/);
    expect(html).toContain("Deploy on Fridays.");
    expect(html).toContain("Hotfixes any day.");
    expect(html).toMatch(
      new RegExp(
        `data-session="${broken.id}"[^>]*>[^]*?class="empty session-error">This session could not be read: [^<]+</p>`,
      ),
    );
  });

  it("a session that cannot be opened: its error escaped and clipped, the others shown", async () => {
    const manager = new ManagerWithAnUnopenableSession(sqliteBackend(new Database(":memory:")));
    const good = await manager.create("Good chat");
    await manager.getSession(good.id).appendMessage(message("g1", "Deploy on Fridays."));
    manager.unopenable = (await manager.create("<b>Unopenable</b> chat")).id;
    manager.message = `<script>alert(1)</script>${"x".repeat(5_000)}`;

    const inspector = createInspector({ sessions: manager, authorize: () => "read" });
    const { page, html, snapshot } = await load(inspector);
    expect(page.status).toBe(200);
    const [unopenable, shown] = snapshot.sessions;
    expect(shown).toMatchObject({ name: "Good chat", error: null, storedMessages: 1 });
    expect(unopenable?.error?.startsWith("<script>alert(1)</script>xxx")).toBe(true);
    expect(unopenable?.error?.length).toBeLessThanOrEqual(501);
    expect(html).toContain("Deploy on Fridays.");
    expect(html).toContain("This session could not be read: &lt;script&gt;alert(1)&lt;/script&gt;xxx");
    expect(html).toContain("&lt;b&gt;Unopenable&lt;/b&gt; chat");
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("x".repeat(1_000));
  });

  it("a single session the inspector was given is shown with its error, and the blocks still render", async () => {
    const database = new Database(":memory:");
    const manager = new SessionManager(sqliteBackend(database));
    const session = manager.getSession("chat");
    await session.appendMessage(message("m1", "About to be broken."));
    const badShape = JSON.stringify({ id: "m1", role: "user", parts: [null] });
    database.prepare("UPDATE assistant_messages SET content = ? WHERE id = ?").run(badShape, "m1");
    const blocks = new SessionManager(new SessionBuilder(sqliteBackend(database)).withContext("memory"));
    const context = blocks.getSession("chat").context;
    await context.setBlock("memory", "The user is Ada.");
    const inspector = createInspector({ sessions: session, context, authorize: () => "read" });
    const { page, html, snapshot } = await load(inspector);
    expect(page.status).toBe(200);
    expect(snapshot.sessions).toHaveLength(1);
    expect(snapshot.sessions[0]?.error).toEqual(expect.any(String));
    expect(html).toContain("The user is Ada.");
    expect(html).toContain("This session could not be read:");
  });
});

/** A registry that records what each listing asked for. */
class RecordingRegistry extends InMemorySessionRegistry {
  readonly asked: (ListSessionsOptions | undefined)[] = [];
  override list(options?: ListSessionsOptions): Promise<SessionInfo[]> {
    this.asked.push(options);
    return super.list(options);
  }
}

describe("the sessions a page lists", () => {
  it("are asked of the registry by limit: the 20 most recently updated, not every row", async () => {
    const registry = new RecordingRegistry();
    const manager = new SessionManager(inMemoryBackend({ registry }));
    for (let index = 0; index < 25; index++) await manager.create(`Chat ${index}`);
    const inspector = createInspector({ sessions: manager, authorize: () => "read" });
    const { snapshot } = await load(inspector);
    expect(snapshot.sessions.map((session) => session.name)).toEqual(
      Array.from({ length: 20 }, (_, index) => `Chat ${24 - index}`),
    );
    expect(registry.asked).toEqual([{ limit: 20 }, { limit: 20 }]);
  });
});

/** A registry whose listing fails, as a database that dropped its connection does. */
class FailingRegistry extends InMemorySessionRegistry {
  override list(): Promise<SessionInfo[]> {
    return Promise.reject(new Error("connection to the sessions database was lost"));
  }
}

describe("sessions that cannot be listed", () => {
  it("leave the page and the snapshot answering, with the error where the sessions would be", async () => {
    const manager = new SessionManager(inMemoryBackend({ registry: new FailingRegistry() }));
    const inspector = createInspector({ sessions: manager, authorize: () => "read" });
    const { page, html, json, snapshot } = await load(inspector);
    expect(page.status).toBe(200);
    expect(json.status).toBe(200);
    expect(snapshot.sessions).toEqual([]);
    expect(snapshot.sessionsError).toBe("connection to the sessions database was lost");
    expect(html).toContain("The sessions could not be listed: connection to the sessions database was lost");
    expect(html).not.toContain("No session.");
  });

  it("is null when they were listed", async () => {
    const manager = new SessionManager(inMemoryBackend());
    await manager.create("Chat");
    const { snapshot } = await load(createInspector({ sessions: manager, authorize: () => "read" }));
    expect(snapshot.sessionsError).toBeNull();
    expect(snapshot.sessions.map((session) => session.name)).toEqual(["Chat"]);
  });
});
