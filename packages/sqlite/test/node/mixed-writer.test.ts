import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { AgentSessionProvider } from "agents-session/experimental/memory/session";
import { afterEach, describe, expect, it } from "vitest";
import { agentsDeletesThenWeReappend, agentsWritesAfterUs, ids, say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";

let opened: TemporaryDatabase | undefined;
afterEach(() => {
  opened?.remove();
  opened = undefined;
});

describe("a lean database that agents@0.22.0 writes to after us (better-sqlite3)", () => {
  it("keeps every message and the right paths, on the store open all along and after a reopen", async () => {
    opened = openTemporaryDatabase();
    const { overlayId } = await agentsWritesAfterUs(
      sqliteTree(opened.database, { sessionId: "chat", newDatabaseLayout: "lean" }),
      agentsHost(opened.database),
    );

    // After a restart the database is read with the parent index agents added.
    const reopened = sqliteTree(opened.reopen(), "chat");
    const agents = new AgentSessionProvider(agentsHost(opened.database), "chat");
    expect(ids(await reopened.getHistory())).toEqual([`compaction_${overlayId}`, "c", "f", "g", "h"]);
    expect(ids(await reopened.getHistory("e"))).toEqual(["a", "b2", "d", "e"]);
    await reopened.appendMessage(say("i", "and monday again"));
    expect(ids(agents.getHistory()).slice(-3)).toEqual(["g", "h", "i"]);
    expect(ids(await reopened.getHistory()).slice(-3)).toEqual(["g", "h", "i"]);
  });

  it("refuses to re-append an id agents deleted while a stored message still names it (no cycle)", async () => {
    opened = openTemporaryDatabase();
    await agentsDeletesThenWeReappend(
      sqliteTree(opened.database, { sessionId: "chat", newDatabaseLayout: "lean" }),
      agentsHost(opened.database),
    );

    // The same after a restart.
    const reopened = sqliteTree(opened.reopen(), "chat");
    await expect(reopened.appendMessage(say("b", "two again", "assistant"), "b-new")).rejects.toThrow(
      'id "b" is still the parent of stored messages',
    );
    expect(ids(await reopened.getHistory())).toEqual(["c", "b-new"]);
  });
});
