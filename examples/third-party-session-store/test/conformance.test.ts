import { describeSessionStoreV1 } from "@contextblocks/conformance";
import { InMemoryKeyValueNamespace, KeyValueSessionStore } from "../src/index.js";

// A fresh database per store; a small list page so the suite also walks `list` page by page.
describeSessionStoreV1(
  "KeyValueSessionStore",
  () => new KeyValueSessionStore({ namespace: new InMemoryKeyValueNamespace({ pageSize: 7 }) }),
  {
    capabilities: {},
    // Another session on the same database: ids are unique across it, everything else stays apart.
    session: (store, sessionId) => new KeyValueSessionStore({ namespace: store.namespace, sessionId }),
    // A new instance on the same database and session: a restart, as far as the store can tell.
    reopen: (store) => new KeyValueSessionStore({ namespace: store.namespace, sessionId: store.sessionId }),
  },
);
