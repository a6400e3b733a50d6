import { Session } from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { expect, it } from "vitest";
import { checkSessionHistoryAndFeed } from "../src/index.js";

// checkSessionHistoryAndFeed tested on itself: a Session on the reference store passes (with the store's
// optional path methods, and through the required contract only), and a session that skips its feed fails.

it("a Session on InMemorySessionStore passes", async () => {
  await checkSessionHistoryAndFeed(new Session({ store: new InMemorySessionStore({ sessionId: "chat" }) }), {
    mirror: new MessageTree(new InMemorySessionStore({ sessionId: "chat" })),
  });
});

it("a session whose feed misses updates fails: the mirror reads the old content", async () => {
  const session = new Session({ store: new InMemorySessionStore({ sessionId: "chat" }) });
  const silent = new Proxy(session, {
    get(target, property) {
      if (property === "subscribe") {
        return (listener: (event: { type: string }) => void) =>
          target.subscribe((event) => {
            if (event.type !== "message-updated") listener(event);
          });
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  await expect(
    checkSessionHistoryAndFeed(silent, {
      mirror: new MessageTree(new InMemorySessionStore({ sessionId: "chat" })),
    }),
  ).rejects.toThrow();
});
