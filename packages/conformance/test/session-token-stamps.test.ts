import { Session } from "@contextblocks/sessions";
import { InMemorySessionStore, InMemorySessions } from "@contextblocks/sessions/memory";
import type { SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import { expect, it } from "vitest";
import { type CompactionSettings, checkCompactionAcrossSessions } from "../src/index.js";

// checkCompactionAcrossSessions tested on itself: Sessions on the reference store pass, and a store that
// does not keep the calibration (the Session holds it, as before token stamps) fails: a new Session per turn
// starts uncalibrated and compacts later than one long-lived Session.

const sessionOn =
  (makeStore: (sessionId: string) => SessionStoreV1) => (sessionId: string, settings: CompactionSettings) =>
    new Session({
      store: makeStore(sessionId),
      compaction: settings.compaction as never,
      threshold: settings.threshold,
    });

it("Sessions on InMemorySessionStore compact at the same turns, per turn or long-lived", async () => {
  const sessions = new InMemorySessions();
  const result = await checkCompactionAcrossSessions(
    sessionOn((sessionId) => new InMemorySessionStore({ sessionId, sessions })),
  );
  expect(result.perRequest.length).toBeGreaterThan(0);
});

it("a store that keeps no calibration fails: a new Session per turn compacts later", async () => {
  const sessions = new InMemorySessions();
  const forgetful = (sessionId: string): SessionStoreV1 => {
    const store = new InMemorySessionStore({ sessionId, sessions });
    return new Proxy(store, {
      get(target, property) {
        if (property === "readCalibration" || property === "writeCalibration") return undefined;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  await expect(checkCompactionAcrossSessions(sessionOn(forgetful))).rejects.toThrow(/new Session per turn/);
});
