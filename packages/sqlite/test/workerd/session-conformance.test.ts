import { env, runInDurableObject } from "cloudflare:test";
import {
  type ConformanceMessage,
  describeSessionStore,
  type SessionStoreUnderTest,
} from "@contextblocks/conformance";
import type { SqliteSessionStore } from "../../src/index.js";

/**
 * A session store whose every call runs inside a Durable Object, on a `SqliteSessionStore` that lives
 * there (on the object's `ctx.storage`). Each factory call gets its own object (a fresh store); other
 * sessions and restarts are new providers in the same object.
 */
interface RoutedStore extends SessionStoreUnderTest {
  readonly objectName: string;
  readonly sessionId: string;
}

function routed(objectName: string, sessionId: string): RoutedStore {
  const key = crypto.randomUUID();
  const inside = <R>(call: (store: SqliteSessionStore) => R | Promise<R>): Promise<R> =>
    runInDurableObject(env.CONTEXT_OBJECT.getByName(objectName), (instance) =>
      call(instance.sessionStore(key, sessionId)),
    );
  const message = (value: unknown) => value as ConformanceMessage;
  return {
    objectName,
    sessionId,
    getMessage: (id) => inside(async (store) => message(await store.getMessage(id))),
    getHistory: (leafId) => inside(async (store) => (await store.getHistory(leafId)).map(message)),
    getLatestLeaf: () => inside(async (store) => message(await store.getLatestLeaf())),
    getBranches: (id) => inside(async (store) => (await store.getBranches(id)).map(message)),
    getPathLength: (leafId) => inside((store) => store.getPathLength(leafId)),
    appendMessage: (entry, parentId) => inside((store) => store.appendMessage(entry, parentId)),
    updateMessage: (entry) => inside((store) => store.updateMessage(entry)),
    deleteMessages: (ids) => inside((store) => store.deleteMessages(ids)),
    clearMessages: () => inside((store) => store.clearMessages()),
    addCompaction: (summary, from, to) => inside((store) => store.addCompaction(summary, from, to)),
    getCompactions: () => inside((store) => store.getCompactions()),
    getNode: (id) => inside((store) => store.getNode(id)),
    getTree: (options) => inside((store) => store.getTree(options)),
    searchMessages: (query, limit) => inside((store) => store.searchMessages(query, limit)),
  };
}

describeSessionStore(
  "SqliteSessionStore on Durable Object storage",
  () => routed(crypto.randomUUID(), "conformance"),
  {
    capabilities: { search: true, tree: true },
    session: (store, sessionId) => routed(store.objectName, sessionId),
    reopen: (store) => routed(store.objectName, store.sessionId),
    largePartSize: 262_144,
    timeout: 60_000,
  },
);
