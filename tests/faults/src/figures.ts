import type { TranscriptFindings } from "./transcript-check.js";

/** What a scenario reports: the faults it injected and what the checks after them found. */
export interface FaultFigures {
  scenario: string;
  /** Faults injected (kills, restarts, aborts, appends under a subscriber that never reads). */
  injected: number;
  /** Faults after which the checks found nothing newly broken. */
  survived: number;
  /** Messages the writers were told were stored. */
  acknowledged: number;
  /** Writes that failed because of a fault and were retried (`null` where a writer dies with its write). */
  retriedWrites: number | null;
  /**
   * Calls that never settled and were given up on (a write retried, a check retried after the object was
   * recovered): an availability finding, not damage; the checks still decide what survived.
   */
  unsettledCalls: number;
  /** Acknowledged messages missing from the active path afterwards. */
  lost: number;
  /** Acknowledged messages stored more than once. */
  duplicated: number;
  /** Messages found with two children (the writers never branch). */
  forks: number;
  /** Messages that did not read back as they were sent. */
  halfWrittenMessages: number;
  /** Batches (one `appendMessages` call: a model call's messages) found stored in part. */
  partialBatches: number;
  /** Tool calls (or other reasons) that make the next turn's prompt one providers refuse. */
  invalidNextPrompts: number;
  /** The most memory a measured process held (bytes), or `null` when not measured. */
  peakMemoryBytes: number | null;
  /** What broke an invariant, the first few times. */
  examples: string[];
}

/** Findings as sets of names, so a defect a later check sees again counts once. */
type Kind = "lost" | "duplicated" | "forks" | "halfWritten" | "partialBatches" | "invalidNextPrompt";

/**
 * Adds up the checks of one scenario. Damage persists, so each broken thing counts once however many
 * checks see it, and a fault survived when the check after it found nothing new.
 */
export class FaultTally {
  injected = 0;
  survived = 0;
  retriedWrites: number | null = null;
  unsettledCalls = 0;
  peakMemoryBytes: number | null = null;
  readonly #acknowledged = new Set<string>();
  readonly #found: Record<Kind, Set<string>> = {
    lost: new Set(),
    duplicated: new Set(),
    forks: new Set(),
    halfWritten: new Set(),
    partialBatches: new Set(),
    invalidNextPrompt: new Set(),
  };
  readonly #examples: string[] = [];

  constructor(readonly scenario: string) {}

  acknowledge(ids: Iterable<string>): void {
    for (const id of ids) this.#acknowledged.add(id);
  }

  /** Writes a fault made fail, retried. */
  retried(count: number): void {
    this.retriedWrites = (this.retriedWrites ?? 0) + count;
  }

  /** A memory reading of a measured process (bytes). */
  memory(bytes: number): void {
    this.peakMemoryBytes = Math.max(this.peakMemoryBytes ?? 0, bytes);
  }

  /** One fault injected. */
  fault(): void {
    this.injected++;
  }

  /**
   * Records a check of `session` after the fault `fault` (both names for the report); `true` when it found
   * nothing that an earlier check of that session had not found already.
   */
  check(findings: TranscriptFindings, session: string, fault: string): boolean {
    const prefix = `${session}: `;
    const found: Record<Kind, readonly string[]> = {
      lost: findings.lost,
      duplicated: findings.duplicated,
      forks: findings.forks,
      halfWritten: findings.halfWritten,
      partialBatches: findings.partialBatches,
      // Named by the tool calls left without a result, which the SDK's refusal names only the first of.
      invalidNextPrompt:
        findings.invalidNextPrompt === null
          ? []
          : findings.unansweredToolCalls.length > 0
            ? findings.unansweredToolCalls.map((id) => `${id} (${findings.invalidNextPrompt})`)
            : [findings.invalidNextPrompt],
    };
    const fresh: string[] = [];
    for (const kind of Object.keys(found) as Kind[]) {
      for (const name of found[kind]) {
        const key = prefix + name;
        if (this.#found[kind].has(key)) continue;
        this.#found[kind].add(key);
        fresh.push(`${describeKind(kind)} ${name}`);
      }
    }
    if (fresh.length > 0) {
      this.example(`${fault}, ${session}: ${fresh.join("; ")} (path of ${findings.pathLength})`);
    }
    return fresh.length === 0;
  }

  /** A fault survived. */
  survive(): void {
    this.survived++;
  }

  /** Something that broke an invariant, kept for the report (the first five). */
  example(text: string): void {
    if (this.#examples.length < 5) this.#examples.push(text.slice(0, 600));
  }

  figures(): FaultFigures {
    return {
      scenario: this.scenario,
      injected: this.injected,
      survived: this.survived,
      acknowledged: this.#acknowledged.size,
      retriedWrites: this.retriedWrites,
      unsettledCalls: this.unsettledCalls,
      lost: this.#found.lost.size,
      duplicated: this.#found.duplicated.size,
      forks: this.#found.forks.size,
      halfWrittenMessages: this.#found.halfWritten.size,
      partialBatches: this.#found.partialBatches.size,
      invalidNextPrompts: this.#found.invalidNextPrompt.size,
      peakMemoryBytes: this.peakMemoryBytes,
      examples: [...this.#examples],
    };
  }
}

function describeKind(kind: Kind): string {
  switch (kind) {
    case "lost":
      return "lost";
    case "duplicated":
      return "stored twice:";
    case "forks":
      return "forked at";
    case "halfWritten":
      return "half-written:";
    case "partialBatches":
      return "batch stored in part, from";
    case "invalidNextPrompt":
      return "next prompt refused:";
  }
}
