import { Session } from "@contextblocks/sessions";
import { afterEach, describe, it } from "vitest";
import { SqliteSessionStore } from "../../src/index.js";
import { checkHistoryAndFeed } from "../history-feed-checks.js";
import { openTemporaryDatabase, type TemporaryDatabase } from "./temporary-database.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => temporary?.remove());

describe("Session.history / historyBatches / the change feed on SqliteSessionStore (better-sqlite3)", () => {
  it("batched and budgeted reads equal getHistory; the feed mirrors; upsert and import keep the tree", async () => {
    temporary = openTemporaryDatabase();
    const session = new Session({ store: new SqliteSessionStore(temporary.database, "chat") });
    await checkHistoryAndFeed(session, 300_000);
  });
});
