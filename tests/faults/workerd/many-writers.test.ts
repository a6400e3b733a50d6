/**
 * Many sessions and writers on one Durable Object, in workerd: writers call the object at once (each call
 * a new `Session` on its storage), and the object is reset (`ctx.abort`) at a random moment of each round.
 * FAULTS_SCALE "short" is the CI run; "long" (bench/src/faults.ts) runs more rounds and writers, and the
 * figures travel to the Node side in the test's `meta` (vitest's JSON report).
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { batchScript } from "../src/batches.js";
import { withDeadline } from "../src/deadline.js";
import { faultRounds } from "../src/fault-rounds.js";
import { type FaultFigures, FaultTally } from "../src/figures.js";
import { RetryingWriter } from "../src/retrying-writer.js";
import { turnScript } from "../src/turns.js";

declare module "vitest" {
  interface TaskMeta {
    faultFigures?: FaultFigures;
  }
}

const long = env.FAULTS_SCALE === "long";
const resets = long ? 40 : 4;
const sessions = long ? 4 : 3;
/** Writers appending batches: more than sessions, so sessions have two writers at once. */
const appendWriters = long ? 16 : 6;
const turnWriters = long ? 2 : 1;

it(`${appendWriters + turnWriters} writers on ${sessions + turnWriters} sessions of one Durable Object, reset ${resets} times mid-write: nothing acknowledged lost, stored twice or half-written, no fork`, async ({
  task,
}) => {
  const object = () => env.FAULTS_OBJECT.getByName("many-writers");
  const tally = new FaultTally(
    `Durable Object reset mid-write (${appendWriters} writers appending to ${sessions} sessions, ${turnWriters} taking turns)`,
  );
  const writers = [
    ...Array.from(
      { length: appendWriters },
      (_, index) =>
        new RetryingWriter(`appends-${index % sessions}`, batchScript, (batch, { id, generation }) =>
          object().appendBatch(id, `d${index}g${generation}`, batch),
        ),
    ),
    ...Array.from(
      { length: turnWriters },
      (_, index) =>
        new RetryingWriter(`turns-${index}`, turnScript, (turn, { id }) => object().takeTurn(id, turn)),
    ),
  ];
  await faultRounds({
    tally,
    writers,
    rounds: resets,
    // The reset call fails as the object aborts; one that never settles is let go (the writers' own
    // deadlines cover the calls it cut off).
    inject: async () => {
      await withDeadline(object().reset(), 10_000, "reset").catch(() => undefined);
    },
    check: (sessionId, acknowledged, script) =>
      object().check(sessionId, [...acknowledged], script === turnScript ? "turns" : "appends"),
    recover: async () => {
      await withDeadline(object().reset(), 10_000, "reset").catch(() => undefined);
    },
    faultName: "reset",
    maximumDelayMs: 200,
    roundsPerSession: 5,
    // The figures so far travel with the test even if it is cut short.
    onRound: () => {
      task.meta.faultFigures = tally.figures();
    },
    random: Math.random,
  });
  const figures = tally.figures();
  task.meta.faultFigures = figures;
  expect(figures.injected).toBe(resets);
  expect(figures.acknowledged).toBeGreaterThan(0);
  expect(figures).toMatchObject({ lost: 0, duplicated: 0, forks: 0, halfWrittenMessages: 0 });
}, 600_000);
