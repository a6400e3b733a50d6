import { expect } from "vitest";
import type { SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Two sessions on one store, and a restart: nothing leaks, nothing is lost. */
export function sessionIsolationGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  sessionGroup(
    "isolation",
    suite,
    suite.options.session ? null : "needs the session option",
    (fixture, test) => {
      test("sessions on one store do not see each other's messages, leaves, overlays or clears", async () => {
        const one = await fixture.create();
        const two = await fixture.session(one, "other-session");
        await one.appendMessage(textMessage("1a", "alpha"));
        await two.appendMessage(textMessage("2a", "beta"));
        await two.appendMessage(textMessage("2b", "gamma"));
        await one.addCompaction("one's summary", "1a", "1a");
        expect(idsOf(await one.getHistory())).toHaveLength(1);
        expect(idsOf(await two.getHistory())).toEqual(["2a", "2b"]);
        expect(await one.getMessage("2a")).toBeNull();
        expect((await one.getLatestLeaf())?.id).toBe("1a");
        expect(await two.getCompactions()).toEqual([]);
        await one.clearMessages();
        expect(idsOf(await two.getHistory())).toEqual(["2a", "2b"]);
      });
    },
  );

  sessionGroup(
    "durability",
    suite,
    suite.options.reopen ? null : "needs the reopen option",
    (fixture, test) => {
      test("a restarted instance reads the tree, the latest leaf and the overlays, and appends under that leaf", async () => {
        const store = await fixture.create();
        for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
        await store.appendMessage(textMessage("b2", "branch"), "a");
        await store.addCompaction("summary of a", "a", "a");
        const reopened = await fixture.reopen(store);
        expect((await reopened.getLatestLeaf())?.id).toBe("b2");
        expect(idsOf(await reopened.getBranches("a"))).toEqual(["b", "b2"]);
        expect((await reopened.getHistory("c")).map((message) => message.parts[0]?.text)).toEqual([
          "summary of a",
          "text b",
          "text c",
        ]);
        await reopened.appendMessage(textMessage("d", "after restart"));
        expect(idsOf(await reopened.getHistory()).slice(-2)).toEqual(["b2", "d"]);
        expect(await reopened.getPathLength()).toBe(3);
      });
    },
  );
}
