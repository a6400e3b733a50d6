import { beforeAll, describe, expect, it } from "vitest";
import { type CrashFindings, crashedWriter, killedWriter } from "../src/killed-writer.js";

/*
 * The short version of the killed-writer scenario (the long one, hundreds of kills, is bench/src/faults.ts).
 * Where each kill lands is random, so only what must hold wherever it lands is asserted; the exact crash
 * points below are the repros of what random kills find only sometimes.
 */
describe("a Node writer killed with SIGKILL mid-append on a better-sqlite3 file database", () => {
  it.each([
    ["appends, lean layout, WAL", { mode: "appends", layout: "lean", journalMode: "wal", kills: 5 }],
    [
      "appends, keyed layout, rollback journal",
      { mode: "appends", layout: "keyed", journalMode: "delete", kills: 4 },
    ],
    ["turns, lean layout, WAL", { mode: "turns", layout: "lean", journalMode: "wal", kills: 4 }],
  ] as const)(
    "%s: no acknowledged message lost, stored twice, forked or half-written",
    async (_, options) => {
      const figures = await killedWriter(options);
      expect(figures.injected).toBe(options.kills);
      expect(figures.acknowledged).toBeGreaterThan(0);
      expect(figures).toMatchObject({ lost: 0, duplicated: 0, forks: 0, halfWrittenMessages: 0 });
    },
  );
});

describe("a writer that kills itself between two messages of one appendMessages call", () => {
  let crash: CrashFindings;
  beforeAll(async () => {
    crash = await crashedWriter("inside-a-batch", { layout: "lean", journalMode: "wal" });
  });

  it("loses nothing it acknowledged and half-writes no message", () => {
    expect(crash.acknowledged).toEqual(["w.0-0"]);
    expect(crash.findings).toMatchObject({ lost: [], duplicated: [], forks: [], halfWritten: [] });
  });

  // `appendMessages` stores a batch in one transaction of the store (it stored message by message before).
  it("leaves the batch stored whole or not at all", () => {
    expect(crash.findings.partialBatches).toEqual([]);
  });
});

describe("a writer that kills itself between a turn's tool call and its result", () => {
  let crash: CrashFindings;
  beforeAll(async () => {
    crash = await crashedWriter("before-a-tool-result", { layout: "lean", journalMode: "wal" });
  });

  it("loses nothing and half-writes no message", () => {
    expect(crash.findings).toMatchObject({ lost: [], duplicated: [], forks: [], halfWritten: [] });
    expect(crash.findings.pathLength).toBe(2);
  });

  // The pipeline stores a model call's tool call before the tool has run; a crash in between leaves the
  // call without its result, and the next prompt gives it an error result saying it was interrupted.
  it("leaves a transcript whose next turn's prompt providers accept", () => {
    expect(crash.findings.invalidNextPrompt).toBeNull();
  });
});
