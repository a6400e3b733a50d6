// The reference store on the storage contract (InMemorySessionStore of @contextblocks/sessions/memory):
// must pass every group, the contract's own and the message tree's through it.
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { describeSessionStoreV1 } from "../../src/index.js";

describeSessionStoreV1("good storage-contract store", () => new InMemorySessionStore(), {
  capabilities: { search: true, calibration: true, pathTotals: true },
  session: (store, sessionId) => new InMemorySessionStore({ sessionId, sessions: store.sessions }),
  reopen: (store) => new InMemorySessionStore({ sessionId: store.sessionId, sessions: store.sessions }),
  largePartSize: 100_000,
});
