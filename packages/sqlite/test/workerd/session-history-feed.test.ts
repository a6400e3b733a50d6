import { checkSessionHistoryAndFeed } from "@contextblocks/conformance";
import { SessionBuilder } from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { describe, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { inObject } from "./in-object.js";

describe("Session.history / historyBatches / the change feed in a Durable Object", () => {
  it("batched and budgeted reads equal getHistory with a message over the 2 MB row; the feed mirrors", async () => {
    await inObject("history-feed", async (state) => {
      const session = new SessionBuilder(sqliteBackend(state.storage)).forSession("chat").build();
      await checkSessionHistoryAndFeed(session, {
        mirror: new MessageTree(new InMemorySessionStore({ sessionId: "chat" })),
        largeMessageBytes: 3 * 1024 * 1024,
      });
    });
  });
});
