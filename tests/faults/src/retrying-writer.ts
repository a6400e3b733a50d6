import { DeadlineExceeded, withDeadline } from "./deadline.js";
import type { WriterScript } from "./writer-script.js";

/** How long a writer keeps retrying one write before it reports it as failed. */
const retryForMs = 30_000;
/** How long one attempt may take before the writer gives up on it and retries (a request timing out). */
const attemptMs = 12_000;

/** The session a writer writes to now: its id and how many times the writer moved to a new one. */
export interface WriterSession {
  id: string;
  generation: number;
}

/**
 * One session's writer for the scenarios whose faults a writer lives through (a server restarted, an
 * object reset): it writes batch or turn 0, 1, 2… through `write`, retrying a write that fails until it
 * succeeds (a batch as it was, so its retry must be an identical one), until told to stop.
 */
export class RetryingWriter {
  /** The ids of every message a write to the current session resolved with. */
  readonly acknowledged: string[] = [];
  /** A write that kept failing, once reported; the writer stopped there. */
  failure: string | null = null;
  #generation = 0;
  #next = 0;
  #retries = 0;
  #unsettled = 0;
  #stopping = false;
  #successesSinceStop = 0;

  constructor(
    private readonly baseSessionId: string,
    readonly script: WriterScript,
    private readonly write: (index: number, session: WriterSession) => Promise<string[]>,
  ) {}

  /** `baseSessionId`, then `baseSessionId-1`, `-2`… after each `renew`. */
  get sessionId(): string {
    return this.#generation === 0 ? this.baseSessionId : `${this.baseSessionId}-${this.#generation}`;
  }

  /**
   * Moves on to a new session, from write 0: a check reads a whole path, so a long run checks paths of a
   * bounded length instead of ever longer ones. Message ids must differ from the last session's (ids are
   * unique across sessions): `write` is told the generation.
   */
  renew(): void {
    this.#generation++;
    this.#next = 0;
    this.acknowledged.length = 0;
  }

  /** Writes (retrying) until `stopAfterNextSuccess` was called and one more write succeeded after it. */
  async run(): Promise<void> {
    this.#stopping = false;
    this.#successesSinceStop = 0;
    while (!(this.#stopping && this.#successesSinceStop > 0)) {
      const started = Date.now();
      let failed = false;
      for (;;) {
        try {
          this.acknowledged.push(
            ...(await withDeadline(
              this.write(this.#next, { id: this.sessionId, generation: this.#generation }),
              attemptMs,
              `write ${this.#next} to ${this.sessionId}`,
            )),
          );
          break;
        } catch (error) {
          if (error instanceof DeadlineExceeded) this.#unsettled++;
          if (Date.now() - started > retryForMs) {
            this.failure = `write ${this.#next} still failing after ${retryForMs} ms: ${(error as Error).message}`;
            return;
          }
          if (!failed) this.#retries++;
          failed = true;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      this.#next++;
      this.#successesSinceStop++;
      // A task boundary between writes, as between two requests: a store that answers synchronously
      // (SQLite) would otherwise keep the writers in one chain of microtasks and starve every timer.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** After the fault: one more write must succeed, then `run` resolves. */
  stopAfterNextSuccess(): void {
    this.#successesSinceStop = 0;
    this.#stopping = true;
  }

  /** Attempts given up on because they never settled, since the last call. */
  takeUnsettled(): number {
    const unsettled = this.#unsettled;
    this.#unsettled = 0;
    return unsettled;
  }

  /** Writes that failed (once or more) and were retried, since the last call. */
  takeRetries(): number {
    const retries = this.#retries;
    this.#retries = 0;
    return retries;
  }
}
