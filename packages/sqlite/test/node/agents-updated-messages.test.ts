import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { AgentSessionProvider as AgentsSessionProvider } from "agents-session/experimental/memory/session";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

const text = (id: string, role: "user" | "assistant", body: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text: body }],
});

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

// Cloudflare agents' Sessions API (agents@0.22.0) re-indexes an updated message under a new search row
// (the next free rowid), so the search rows' rowids run ahead of the message rows. Our index row goes under
// the message's rowid when that rowid is free, and under the next free one otherwise.
describe("a database where agents updated messages", () => {
  it("takes appends, updates and searches after the switch", async () => {
    temporary = openTemporaryDatabase();
    const agents = new AgentsSessionProvider(agentsHost(temporary.database), "chat-1");
    agents.appendMessage(text("a1", "user", "the lighthouse keeper"));
    agents.appendMessage(text("a2", "assistant", "keeps the lamp lit"));
    agents.updateMessage(text("a1", "user", "the lighthouse keeper retired"));
    agents.updateMessage(text("a2", "assistant", "kept the lamp lit for forty years"));

    const store = sqliteTree(temporary.database, "chat-1");
    await store.appendMessage(text("c3", "user", "who replaced the keeper"));
    await store.appendMessage(text("c4", "assistant", "a solar beacon replaced the keeper"));
    await store.updateMessage(text("c3", "user", "who replaced the retired keeper"));
    await store.updateMessage(text("a1", "user", "the lighthouse keeper retired early"));

    expect((await store.getHistory()).map((message) => message.id)).toEqual(["a1", "a2", "c3", "c4"]);
    const found = (await store.searchMessages("keeper", 10)).map((result) => result.id).sort();
    expect(found).toEqual(["a1", "c3", "c4"]);
    expect((await store.searchMessages("early", 10)).map((result) => result.id)).toEqual(["a1"]);
    // One search row per message: nothing stale left behind by the updates.
    const rows = temporary.database
      .prepare("SELECT id, COUNT(*) AS n FROM assistant_fts GROUP BY id ORDER BY id")
      .all();
    expect(rows).toEqual([
      { id: "a1", n: 1 },
      { id: "a2", n: 1 },
      { id: "c3", n: 1 },
      { id: "c4", n: 1 },
    ]);
    // agents still reads what we wrote.
    expect(agents.getHistory().map((message) => message.id)).toEqual(["a1", "a2", "c3", "c4"]);
  });
});
