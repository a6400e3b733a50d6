import { beforeAll, describe, expect, it } from "vitest";
import { type FixtureOutcomes, type ProviderOutcome, runFixtures } from "./run-fixtures.js";

// describeSessionStore tested on itself: the reference store passes, each broken one fails for
// its reason (test/session-fixtures/*.fixture.ts).

let outcomes: FixtureOutcomes;
let errors: unknown[];

beforeAll(async () => {
  ({ outcomes, errors } = await runFixtures(["test/session-fixtures/**/*.fixture.ts"]));
}, 600_000);

function outcome(provider: string): ProviderOutcome {
  for (const providers of outcomes.values()) {
    const found = providers.get(provider);
    if (found) return found;
  }
  throw new Error(`no results for "${provider}"`);
}

it("the fixture files run without errors outside the tests", () => {
  expect(errors).toEqual([]);
});

it("the reference store passes every session group", () => {
  const { failed, passed, skipped } = outcome("good session store");
  expect(failed).toEqual([]);
  expect(skipped).toEqual([]);
  expect(passed.length).toBeGreaterThan(20);
});

describe("broken session stores fail for their reason", () => {
  it("ignoring parentId fails the branch checks", () => {
    expect(outcome("ignores parent").failed).toEqual(
      expect.arrayContaining([
        "tree > a parent with two children is a branch; history and length follow the chosen leaf",
        "tree > parentId null starts a new root, which becomes the latest leaf",
      ]),
    );
  });

  it("not applying overlays fails the overlay and durability checks", () => {
    const { failed } = outcome("ignores overlays");
    expect(failed).toContain(
      "overlays > an overlay replaces its range with one message holding the summary; the messages stay stored",
    );
    expect(failed).toContain(
      "durability > a restarted instance reads the tree, the latest leaf and the overlays, and appends under that leaf",
    );
  });

  it("sharing one session fails isolation and search isolation", () => {
    const { failed } = outcome("shares sessions");
    expect(failed).toContain(
      "isolation > sessions on one store do not see each other's messages, leaves, overlays or clears",
    );
    expect(failed).toContain("search > does not return another session's messages");
  });

  it("overwriting an existing id fails the refusal checks", () => {
    expect(outcome("overwrites ids").failed).toEqual([
      "tree > refuses an existing id and a missing parent, and stores nothing",
      "stored ids > an identical retry (same id, parent and content) succeeds and stores no second row",
      "stored ids > an id stored in this session with other content is refused (INVALID_INPUT naming it); nothing changes",
      "stored ids > a retry under another parent is refused (INVALID_INPUT naming the id); nothing changes",
    ]);
  });

  it("refusing an identical retry fails exactly the retry checks", () => {
    expect(outcome("refuses retries").failed).toEqual([
      "stored ids > an identical retry (same id, parent and content) succeeds and stores no second row",
      // Its last step retries the message in the session that holds it.
      "stored ids across sessions > an id stored in another session is refused, even with the same content, naming the id but not that session; neither session changes",
    ]);
  });

  it("ids unique per session only fail exactly the cross-session check", () => {
    expect(outcome("repeats ids across sessions").failed).toEqual([
      "stored ids across sessions > an id stored in another session is refused, even with the same content, naming the id but not that session; neither session changes",
    ]);
  });

  it("truncating parts fails exactly the large-part round trip", () => {
    expect(outcome("truncates parts").failed).toEqual([
      "content > a text part of 100000 characters comes back unchanged",
    ]);
  });

  it("racing appends fails the concurrency checks", () => {
    expect(outcome("races appends").failed).toEqual([
      "concurrency > 16 appends started at once form one path of 16 messages",
      "hostile writes > two instances on one session appending at once never fork the path",
      // A retry with the parent omitted is sent with the latest leaf (the message itself) as its parent.
      "stored ids > an identical retry (same id, parent and content) succeeds and stores no second row",
      "stored ids across sessions > an id stored in another session is refused, even with the same content, naming the id but not that session; neither session changes",
    ]);
  });

  it("an importMessage that ignores the parent and time fails exactly the import check", () => {
    expect(outcome("imports under the leaf").failed).toEqual([
      "path reads and replay > importMessage (when present): keeps the parent and time; refuses a stored id, a missing parent and a cycle",
    ]);
  });

  it("a getPathNodes that leaves out the root fails exactly the path-nodes check", () => {
    expect(outcome("path without root").failed).toEqual([
      "path reads and replay > getPathNodes (when present): the path root..leaf without content, overlays not applied",
    ]);
  });
});

describe("describeSessionStoreV1 on itself", () => {
  it("the reference store passes every group, the contract's and the message tree's, with none skipped", () => {
    const { failed, passed, skipped } = outcome("good storage-contract store");
    expect(failed).toEqual([]);
    expect(skipped).toEqual([]);
    expect(passed.filter((name) => name.startsWith("storage contract")).length).toBeGreaterThan(15);
    expect(passed.length).toBeGreaterThan(60);
  });

  it("a store that reads the leaf and writes in two steps fails the two-writer checks", () => {
    const { failed } = outcome("reads then writes");
    expect(failed).toEqual(
      expect.arrayContaining([
        "storage contract: two writers > 8 appends under the latest leaf at once form one chain (no fork)",
        "storage contract: two writers > 8 appends expecting the same leaf at once: exactly one is stored, the rest are stale",
      ]),
    );
  });

  it("a store that writes into the records it was given fails exactly the copies check", () => {
    expect(outcome("writes into its arguments").failed).toEqual([
      "storage contract: records and paths > writes are copies: append, update and addOverlay leave what they were given as it was, and changing it afterwards changes nothing stored",
    ]);
  });

  it("a store that keeps the overlay object it was given fails exactly the copies check", () => {
    expect(outcome("keeps the overlay given").failed).toEqual([
      "storage contract: records and paths > writes are copies: append, update and addOverlay leave what they were given as it was, and changing it afterwards changes nothing stored",
    ]);
  });

  it("optional members a store leaves out are skipped with the reason, never passed", () => {
    const { failed, passed, skipped } = outcome("no optional members");
    expect(failed).toEqual([]);
    expect(passed.some((name) => /search|calibration|path totals/.test(name.split(" > ")[0] ?? ""))).toBe(
      false,
    );
    expect(skipped).toEqual(
      expect.arrayContaining([
        expect.stringContaining("storage contract: search (skipped: capabilities.search not declared)"),
        expect.stringContaining(
          "storage contract: calibration (skipped: capabilities.calibration not declared)",
        ),
        expect.stringContaining(
          "storage contract: path totals (skipped: capabilities.pathTotals not declared)",
        ),
      ]),
    );
  });
});
