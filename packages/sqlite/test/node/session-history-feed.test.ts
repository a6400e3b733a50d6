import { checkSessionHistoryAndFeed } from "@contextblocks/conformance";
import { Session } from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => temporary?.remove());

describe("Session.history / historyBatches / the change feed on SqliteSessionStore (better-sqlite3)", () => {
  it("batched and budgeted reads equal getHistory; the feed mirrors; upsert and import keep the tree", async () => {
    temporary = openTemporaryDatabase();
    const session = new Session({ store: sqliteTree(temporary.database, "chat") });
    await checkSessionHistoryAndFeed(session, {
      mirror: new MessageTree(new InMemorySessionStore({ sessionId: "chat" })),
    });
  });
});
