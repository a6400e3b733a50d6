import { postgresBackend } from "@contextblocks/postgres";
import { SessionBuilder } from "@contextblocks/sessions";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import pg from "pg";
import { batchMessages, batchScript } from "./batches.js";
import { faultRounds } from "./fault-rounds.js";
import { type FaultFigures, FaultTally } from "./figures.js";
import { RetryingWriter } from "./retrying-writer.js";
import { checkTranscript } from "./transcript-check.js";
import { takeTurn, turnScript } from "./turns.js";

/** Options of `postgresRestart`. */
export interface PostgresRestartOptions {
  /** How many times the server is restarted (`pg_ctl restart -m immediate`), one per round. */
  restarts: number;
  /** Sessions appending batches at once, one writer each. Default 3. */
  appendWriters?: number;
  /** Sessions taking turns through the pipeline at once, one writer each. Default 1. */
  turnWriters?: number;
  /** The longest wait between a round's start and its restart. Default 300 ms. */
  maximumDelayMs?: number;
  /** Where the restart lands, in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/**
 * Writers appending to sessions on a throwaway Postgres through one `pg.Pool`, the server restarted with
 * `pg_ctl restart -m immediate` (a crash: no checkpoint, every connection cut) while appends and turns
 * are in flight. A batch that fails is retried as it was until it succeeds (an identical retry must not
 * store a second row); a turn that fails is taken again. Each round: writers start, the server restarts,
 * every writer writes once more after it, the writers stop, each session is checked. Connections ask for
 * `synchronous_commit=on`, as production servers run (the throwaway cluster turns it off for speed, and a
 * server that acknowledges commits before writing them may lose them in a crash, by design).
 */
export async function postgresRestart(options: PostgresRestartOptions): Promise<FaultFigures> {
  const appendWriters = options.appendWriters ?? 3;
  const turnWriters = options.turnWriters ?? 1;
  const tally = new FaultTally(
    `Postgres restarted mid-turn (${appendWriters} sessions appending, ${turnWriters} taking turns)`,
  );
  const cluster = await startThrowawayCluster();
  const pool = new pg.Pool({
    connectionString: cluster.connectionString,
    max: appendWriters + turnWriters + 2,
    options: "-c synchronous_commit=on",
  });
  // Idle connections the restart cuts report here; the queries in flight fail on their own.
  pool.on("error", () => undefined);
  const backend = postgresBackend(pool);
  const session = (sessionId: string) => new SessionBuilder(backend).forSession(sessionId).build();
  const writers = [
    ...Array.from(
      { length: appendWriters },
      (_, index) =>
        new RetryingWriter(`appends-${index}`, batchScript, async (batch, { id, generation }) => {
          const messages = batchMessages(batch, `p${index}g${generation}`);
          await session(id).appendMessages(messages);
          return messages.map((message) => message.id);
        }),
    ),
    ...Array.from(
      { length: turnWriters },
      (_, index) =>
        new RetryingWriter(`turns-${index}`, turnScript, (turn, { id }) => takeTurn(session(id), turn)),
    ),
  ];
  try {
    await faultRounds({
      tally,
      writers,
      rounds: options.restarts,
      inject: () => cluster.restart("immediate"),
      check: (sessionId, acknowledged, script) =>
        checkTranscript(backend.messages(sessionId), acknowledged, script),
      faultName: "restart",
      maximumDelayMs: options.maximumDelayMs ?? 300,
      roundsPerSession: 10,
      random: options.random ?? Math.random,
    });
  } finally {
    await pool.end();
    cluster.stop();
  }
  return tally.figures();
}
