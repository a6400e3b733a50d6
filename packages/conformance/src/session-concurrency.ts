import { expect } from "vitest";
import { DEFAULT_CONCURRENT_APPENDS, type SessionStoreUnderTest } from "./session-options.js";
import { type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Appends started together: every message stored once, chained into one path (none lost or forked). */
export function sessionConcurrencyGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const count = suite.options.concurrentAppends ?? DEFAULT_CONCURRENT_APPENDS;
  sessionGroup("concurrency", suite, null, (fixture, test) => {
    test(`${count} appends started at once form one path of ${count} messages`, async () => {
      const store = await fixture.create();
      const ids = Array.from({ length: count }, (_, index) => `m${index}`);
      await Promise.all(ids.map((id) => Promise.resolve(store.appendMessage(textMessage(id, `text ${id}`)))));
      const history = await store.getHistory();
      expect(history.map((message) => message.id).sort()).toEqual([...ids].sort());
      expect(await store.getPathLength()).toBe(count);
    });
  });
}
