import type { SessionMessage } from "@contextblocks/sessions";

/** What a checker needs to know about what a writer sends. */
export interface WriterScript {
  /** Whether a stored message reads back as its writer sent it (a later state it sends counts too). */
  isWhole(message: SessionMessage): boolean;
  /** The writer's batches (one `appendMessages` call each) the path holds only in part, each named by an id in it. */
  partialBatches(path: readonly SessionMessage[]): string[];
}
