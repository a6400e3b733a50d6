import { env, runInDurableObject } from "cloudflare:test";
import { describeSessionStoreV1 } from "@contextblocks/conformance";
import type { SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import type { SqliteSessionStore } from "../../src/index.js";
import type { NewSessionLayout } from "../../src/store-kit.js";

/**
 * A session store whose every call runs inside a Durable Object, on a `SqliteSessionStore` that lives there
 * (on the object's `ctx.storage`); the message tree of the suite's tree groups runs outside and calls it.
 * Each factory call gets its own object (a fresh database); other sessions and restarts are new stores in
 * the same object.
 */
interface RoutedStore extends SessionStoreV1 {
  readonly objectName: string;
}

function routed(objectName: string, sessionId: string, layout: NewSessionLayout): RoutedStore {
  const key = crypto.randomUUID();
  const inside = <R>(call: (store: SqliteSessionStore) => R | Promise<R>): Promise<R> =>
    runInDurableObject(env.CONTEXT_OBJECT.getByName(objectName), (instance) =>
      call(instance.sessionStore(key, sessionId, layout)),
    );
  return {
    specificationVersion: "v1",
    wholePathReads: true,
    objectName,
    sessionId,
    readPath: (leafId, options) => inside((store) => store.readPath(leafId, options)),
    readMessages: (ids) => inside((store) => store.readMessages(ids)),
    readChildren: (parentId) => inside((store) => store.readChildren(parentId)),
    readTree: (limit) => inside((store) => store.readTree(limit)),
    append: (records, placement) => inside((store) => store.append(records, placement)),
    update: (record) => inside((store) => store.update(record)),
    delete: (ids) => inside((store) => store.delete(ids)),
    clear: () => inside((store) => store.clear()),
    addOverlay: (overlay) => inside((store) => store.addOverlay(overlay)),
    readOverlays: () => inside((store) => store.readOverlays()),
    search: (query, limit) => inside((store) => store.search(query, limit)),
    readCalibration: () => inside((store) => store.readCalibration()),
    writeCalibration: (calibration) => inside((store) => store.writeCalibration(calibration)),
    readPathTotals: (leafId) => inside((store) => store.readPathTotals(leafId)),
  };
}

// Keyed is a new database's layout on a Durable Object; lean is what the agents drop-in asks for.
for (const layout of ["keyed", "lean"] as const) {
  describeSessionStoreV1(
    `SqliteSessionStore on Durable Object storage, ${layout} layout`,
    () => routed(crypto.randomUUID(), "conformance", layout),
    {
      capabilities: { search: true, calibration: true, pathTotals: true },
      session: (store, sessionId) => routed(store.objectName, sessionId, layout),
      reopen: (store) => routed(store.objectName, store.sessionId, layout),
      largePartSize: 262_144,
      timeout: 60_000,
    },
  );
}
