// The reference session store (InMemorySessionStore of @contextblocks/sessions/memory): must pass every group.
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { describeSessionStore } from "../../src/index.js";

describeSessionStore("good session store", () => new InMemorySessionStore(), {
  capabilities: { search: true, tree: true },
  session: (store, sessionId) => new InMemorySessionStore({ sessionId, sessions: store.sessions }),
  reopen: (store) => new InMemorySessionStore({ sessionId: store.sessionId, sessions: store.sessions }),
  largePartSize: 100_000,
});
