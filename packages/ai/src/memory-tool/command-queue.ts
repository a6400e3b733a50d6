import type { ContextBlocks } from "@contextblocks/core";
import { BlockQueue } from "@contextblocks/core/store-kit";

/** Each context's queue of memory commands (a context no longer used takes its queue with it). */
const queues = new WeakMap<ContextBlocks, BlockQueue>();

/**
 * Runs the memory tool's commands on one context one after another, in call order, as they would run on a
 * file system where each command finishes before the next. The AI SDK runs a step's tool calls at once:
 * two inserts into an empty file each read it empty and the second write dropped the first, and a rename
 * that read a file before an edit of it landed removed the file with the edit, which had reported success.
 * A queue per context, not per tool instance, so two `memoryTool`s on one context take turns too; core's
 * per-block queue, under one name for the whole memory directory.
 */
export function inTurn<T>(context: ContextBlocks, command: () => Promise<T>): Promise<T> {
  let queue = queues.get(context);
  if (queue === undefined) {
    queue = new BlockQueue();
    queues.set(context, queue);
  }
  return queue.run("memory", command);
}
