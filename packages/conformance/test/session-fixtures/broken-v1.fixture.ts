// Stores on the storage contract that must fail (or skip) for a stated reason: see session-meta.test.ts.

import type { StoredCompaction } from "@contextblocks/sessions";
import { InMemorySessionStore, type InMemorySessions } from "@contextblocks/sessions/memory";
import type { AppendPlacement, AppendResult, MessageRecord } from "@contextblocks/sessions/store-kit";
import { describeSessionStoreV1 } from "../../src/index.js";

/**
 * Reads the leaf, waits for its storage (a real await, as a key-value store's get does), then writes: two
 * writers both read the same leaf and both write under it.
 */
class ReadThenWriteStore extends InMemorySessionStore {
  override async append(
    records: readonly MessageRecord[],
    placement: AppendPlacement,
  ): Promise<AppendResult> {
    const [leaf] = await this.readPath(undefined, { limit: 1, content: false });
    if (placement.expectedLeafId !== undefined && (leaf?.id ?? null) !== placement.expectedLeafId) {
      return { status: "stale-leaf", leafId: leaf?.id ?? null };
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
    const parentId = placement.parentId === undefined ? (leaf?.id ?? null) : placement.parentId;
    return super.append(records, { parentId });
  }
}

describeSessionStoreV1("reads then writes", () => new ReadThenWriteStore(), {
  capabilities: { search: true, calibration: true, pathTotals: true },
  session: (store, sessionId) => new ReadThenWriteStore({ sessionId, sessions: store.sessions }),
});

/** The reference store without its optional members: their groups must be skipped, never passed. */
class PlainStore extends InMemorySessionStore {
  constructor(options: { sessionId?: string; sessions?: InMemorySessions } = {}) {
    super(options);
    for (const member of ["search", "readCalibration", "writeCalibration", "readPathTotals"]) {
      Object.defineProperty(this, member, { value: undefined });
    }
  }
}

describeSessionStoreV1("no optional members", () => new PlainStore(), {
  capabilities: {},
  session: (store, sessionId) => new PlainStore({ sessionId, sessions: store.sessions }),
});

/**
 * Writes each record's placement back into the records it was given, and drops their search text to free
 * memory, as a store that treats its arguments as its own might.
 */
class WritesIntoItsArguments extends InMemorySessionStore {
  override async append(
    records: readonly MessageRecord[],
    placement: AppendPlacement,
  ): Promise<AppendResult> {
    const result = await super.append(records, placement);
    if (result.status === "appended") {
      let parent = result.parentId;
      for (const record of records) {
        (record as { parentId: string | null }).parentId = parent;
        delete record.text;
        parent = record.id;
      }
    }
    return result;
  }
}

describeSessionStoreV1("writes into its arguments", () => new WritesIntoItsArguments(), {
  capabilities: { search: true, calibration: true, pathTotals: true },
  session: (store, sessionId) => new WritesIntoItsArguments({ sessionId, sessions: store.sessions }),
});

/** Keeps the overlay object it was given, so a caller's later change to it changes the stored overlay. */
class KeepsTheOverlayGiven extends InMemorySessionStore {
  override async addOverlay(overlay: StoredCompaction): Promise<void> {
    const list = this.sessions.overlays.get(this.sessionId) ?? [];
    list.push(overlay);
    this.sessions.overlays.set(this.sessionId, list);
  }
}

describeSessionStoreV1("keeps the overlay given", () => new KeepsTheOverlayGiven(), {
  capabilities: { search: true, calibration: true, pathTotals: true },
  session: (store, sessionId) => new KeepsTheOverlayGiven({ sessionId, sessions: store.sessions }),
});
