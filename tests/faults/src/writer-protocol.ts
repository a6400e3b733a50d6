import type { NewSessionLayout } from "@contextblocks/sqlite/store-kit";

/** What a writer appends: `batchMessages` batches or `takeTurn` turns. */
export type WriterMode = "appends" | "turns";

/** A writer process's options (its one argument, as JSON). */
export interface WriterOptions {
  database: string;
  journalMode: "wal" | "delete";
  layout: NewSessionLayout;
  sessionId: string;
  mode: WriterMode;
  /** The first batch or turn to write. */
  start: number;
  /**
   * Where the writer kills itself (SIGKILL), for a repro at an exact point instead of a random moment:
   * once the first message of a batch of several is stored, or once a tool call is stored without its
   * result (between a turn's two model calls).
   */
  crashPoint?: CrashPoint | undefined;
}

/** An exact point for a writer to kill itself at. */
export type CrashPoint = "inside-a-batch" | "before-a-tool-result";

/** What a writer process reports to its parent. */
export type WriterMessage =
  | { type: "ready" }
  | { type: "acknowledged"; index: number; ids: string[]; heapUsed: number };
