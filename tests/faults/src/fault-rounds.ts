import { DeadlineExceeded, withDeadline } from "./deadline.js";
import type { FaultTally } from "./figures.js";
import type { RetryingWriter } from "./retrying-writer.js";
import type { TranscriptFindings } from "./transcript-check.js";
import type { WriterScript } from "./writer-script.js";

/** Options of `faultRounds`. */
export interface FaultRoundsOptions {
  tally: FaultTally;
  writers: readonly RetryingWriter[];
  rounds: number;
  /** Injects one fault; resolves once the system is back (a restarted server accepts connections). */
  inject(): Promise<void>;
  /** Checks a session as a new reader finds it, given what all its writers were acknowledged. */
  check(
    sessionId: string,
    acknowledged: readonly string[],
    script: WriterScript,
  ): Promise<TranscriptFindings>;
  /** What one fault is called in the report ("restart"). */
  faultName: string;
  /** The longest wait between a round's start and its fault. */
  maximumDelayMs: number;
  /** Rounds before the writers move on to new sessions (`RetryingWriter.renew`). Default: never. */
  roundsPerSession?: number;
  /**
   * Brings the system back after a call that never settled (a Durable Object reset), before a check is
   * tried again. Without it, a check that does not settle ends the run.
   */
  recover?: () => Promise<void>;
  /** Called after each round (to publish the figures so far). */
  onRound?: (round: number) => void;
  random: () => number;
}

/** A fault is injected (a server restarted) within this, or the run stops and says so. */
const injectMs = 120_000;
/** A check reads a whole session: bounded, so a check that never settles is reported, not waited on. */
const checkMs = 60_000;

/**
 * Rounds of: every writer writing, a fault at a random moment, every writer writing once more after it,
 * then every session checked. A fault survived when no writer gave up and no check found anything new.
 */
export async function faultRounds(options: FaultRoundsOptions): Promise<void> {
  const { tally, writers } = options;
  for (let round = 1; round <= options.rounds; round++) {
    if (options.roundsPerSession !== undefined && round > 1 && (round - 1) % options.roundsPerSession === 0) {
      for (const writer of writers) writer.renew();
    }
    const running = writers.map((writer) => writer.run());
    await new Promise((resolve) => setTimeout(resolve, options.random() * options.maximumDelayMs));
    tally.fault();
    await withDeadline(options.inject(), injectMs, `${options.faultName} ${round}`);
    for (const writer of writers) writer.stopAfterNextSuccess();
    await Promise.all(running);
    const fault = `${options.faultName} ${round}`;
    let survived = true;
    for (const writer of writers) {
      tally.acknowledge(writer.acknowledged);
      tally.retried(writer.takeRetries());
      tally.unsettledCalls += writer.takeUnsettled();
      if (writer.failure !== null) {
        survived = false;
        tally.example(`${fault}, ${writer.sessionId}: ${writer.failure}`);
        writer.failure = null;
      }
    }
    // Once a session, with what every writer of it was acknowledged (writers may share a session).
    for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
      const sharing = writers.filter((writer) => writer.sessionId === sessionId);
      const acknowledged = sharing.flatMap((writer) => writer.acknowledged);
      const check = () =>
        withDeadline(
          options.check(sessionId, acknowledged, sharing[0]!.script),
          checkMs,
          `the check of ${sessionId} after ${options.faultName} ${round}`,
        );
      let findings: TranscriptFindings;
      try {
        findings = await check();
      } catch (error) {
        // A reader whose request hung asks again once the system is back; the data decides, not the hang.
        if (!(error instanceof DeadlineExceeded) || options.recover === undefined) throw error;
        tally.unsettledCalls++;
        await options.recover();
        findings = await check();
      }
      if (!tally.check(findings, sessionId, fault)) survived = false;
    }
    if (survived) tally.survive();
    options.onRound?.(round);
  }
}
