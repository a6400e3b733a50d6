// The reference session store (InMemorySessionStore of @contextblocks/sessions/memory): must pass every group.
// It is read through the message tree of @contextblocks/sessions, as a Session reads it.

import { InMemorySessionStore, InMemorySessions } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { describeSessionStore } from "../../src/index.js";

class MemoryTree extends MessageTree {
  constructor(
    readonly sessions = new InMemorySessions(),
    sessionId = "",
  ) {
    super(new InMemorySessionStore({ sessionId, sessions }));
  }
}

describeSessionStore("good session store", () => new MemoryTree(), {
  capabilities: { search: true, tree: true },
  session: (store, sessionId) => new MemoryTree(store.sessions, sessionId),
  reopen: (store) => new MemoryTree(store.sessions, store.sessionId),
  largePartSize: 100_000,
});
