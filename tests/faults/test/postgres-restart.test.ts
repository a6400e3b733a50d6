import { expect, it } from "vitest";
import { postgresRestart } from "../src/postgres-restart.js";

// The short version (the long one is bench/src/faults.ts): a throwaway cluster restarted as a crash would
// restart it while three sessions append batches and one takes turns through the pipeline.
it("Postgres restarted mid-turn: every acknowledged message stored once, failed appends retried without a second row", async () => {
  const figures = await postgresRestart({ restarts: 2 });
  expect(figures.injected).toBe(2);
  expect(figures.acknowledged).toBeGreaterThan(0);
  expect(figures).toMatchObject({ lost: 0, duplicated: 0, forks: 0, halfWrittenMessages: 0 });
});
