import { checkSessionHistoryAndFeed } from "@contextblocks/conformance";
import { Session } from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { describe, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { type Connection, newStore, openProvider, release } from "./connections.js";

// Session.history / historyBatches, the change feed, upsertMessage and importMessage on PostgresSessionStore,
// through the message tree as a Session reads it.
for (const connection of ["client", "pool"] as Connection[]) {
  describe(`Session.history / historyBatches / the change feed on PostgresSessionStore (${connection})`, () => {
    it("batched and budgeted reads equal getHistory; the feed mirrors; upsert and import keep the tree", async () => {
      const store = await openProvider(
        await newStore(),
        connection,
        (source) => new MessageTree(new PostgresSessionStore(source, "chat")),
      );
      try {
        await checkSessionHistoryAndFeed(new Session({ store }), {
          mirror: new MessageTree(new InMemorySessionStore({ sessionId: "chat" })),
        });
      } finally {
        await release(store);
      }
    });
  });
}
