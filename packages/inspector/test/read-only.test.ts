import { SessionBuilder, SessionManager } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { blocksTable } from "@contextblocks/sqlite/store-kit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createInspector } from "../src/index.js";

/** Frozen prompts stored in the database (the prompt store keeps one row per session). */
function storedPrompts(database: Database.Database): number {
  const row = database
    .prepare(`SELECT count(*) AS count FROM ${blocksTable} WHERE instr(label, '"_system_prompt"') > 0`)
    .get() as { count: number };
  return row.count;
}

describe("a page view with read access", () => {
  it("stores no frozen prompt, so the first turn's prompt holds memory written after the page load", async () => {
    const database = new Database(":memory:");
    // Each call is another instance over the same database, as another request's worker would be.
    const open = () =>
      new SessionManager(
        new SessionBuilder(sqliteBackend(database))
          .withContext("memory", { maxTokens: 200 })
          .withCachedPrompt(),
      );
    const manager = open();
    const { id } = await manager.create("chat");
    const session = manager.getSession(id);
    await session.context.setBlock("memory", "The user is Ada.");
    const inspector = createInspector({
      sessions: manager,
      context: session.context,
      authorize: () => "read",
    });

    for (const path of ["/", "/snapshot.json"]) {
      const response = await inspector(new Request(`http://agent.test${path}`));
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("The user is Ada.");
    }
    expect(storedPrompts(database)).toBe(0);

    // Memory written after the page load: through the viewed session, and by another instance.
    await session.context.appendToBlock("memory", "Ada deploys on Fridays.");
    await open().getSession(id).context.appendToBlock("memory", "Ada prefers tea.");
    const snapshot = (await (await inspector(new Request("http://agent.test/snapshot.json"))).json()) as {
      prompt: string;
    };
    expect(snapshot.prompt).toContain("Ada prefers tea.");
    expect(storedPrompts(database)).toBe(0);

    // The first turn freezes the prompt: it holds everything written before it.
    const prompt = await session.context.freezeSystemPrompt();
    expect(prompt).toContain("The user is Ada.");
    expect(prompt).toContain("Ada deploys on Fridays.");
    expect(prompt).toContain("Ada prefers tea.");
    expect(storedPrompts(database)).toBe(1);
  });
});
