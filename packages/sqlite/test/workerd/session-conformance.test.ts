import { env, runInDurableObject } from "cloudflare:test";
import {
  type ConformanceMessage,
  describeSessionProvider,
  type SessionProviderUnderTest,
} from "@contextblocks/conformance";
import type { SqliteSessionStore } from "../../src/index.js";

/**
 * A session provider whose every call runs inside a Durable Object, on a `SqliteSessionStore` that lives
 * there (on the object's `ctx.storage`). Each factory call gets its own object (a fresh store); other
 * sessions and restarts are new providers in the same object.
 */
interface RoutedProvider extends SessionProviderUnderTest {
  readonly objectName: string;
  readonly sessionId: string;
}

function routed(objectName: string, sessionId: string): RoutedProvider {
  const key = crypto.randomUUID();
  const inside = <R>(call: (provider: SqliteSessionStore) => R | Promise<R>): Promise<R> =>
    runInDurableObject(env.CONTEXT_OBJECT.getByName(objectName), (instance) =>
      call(instance.sessionStore(key, sessionId)),
    );
  const message = (value: unknown) => value as ConformanceMessage;
  return {
    objectName,
    sessionId,
    getMessage: (id) => inside(async (provider) => message(await provider.getMessage(id))),
    getHistory: (leafId) => inside(async (provider) => (await provider.getHistory(leafId)).map(message)),
    getLatestLeaf: () => inside(async (provider) => message(await provider.getLatestLeaf())),
    getBranches: (id) => inside(async (provider) => (await provider.getBranches(id)).map(message)),
    getPathLength: (leafId) => inside((provider) => provider.getPathLength(leafId)),
    appendMessage: (entry, parentId) => inside((provider) => provider.appendMessage(entry, parentId)),
    updateMessage: (entry) => inside((provider) => provider.updateMessage(entry)),
    deleteMessages: (ids) => inside((provider) => provider.deleteMessages(ids)),
    clearMessages: () => inside((provider) => provider.clearMessages()),
    addCompaction: (summary, from, to) => inside((provider) => provider.addCompaction(summary, from, to)),
    getCompactions: () => inside((provider) => provider.getCompactions()),
    searchMessages: (query, limit) => inside((provider) => provider.searchMessages(query, limit)),
  };
}

describeSessionProvider(
  "SqliteSessionStore on Durable Object storage",
  () => routed(crypto.randomUUID(), "conformance"),
  {
    capabilities: { search: true },
    session: (provider, sessionId) => routed(provider.objectName, sessionId),
    reopen: (provider) => routed(provider.objectName, provider.sessionId),
    largePartSize: 262_144,
  },
);
