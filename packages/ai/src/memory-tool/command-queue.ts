import type { ContextBlocks } from "@contextblocks/core";

/** The end of each context's chain of memory commands (a context no longer used takes its chain with it). */
const tails = new WeakMap<ContextBlocks, Promise<unknown>>();

/**
 * Runs the memory tool's commands on one context one after another, in call order, as they would run on a
 * file system where each command finishes before the next. The AI SDK runs a step's tool calls at once:
 * two inserts into an empty file each read it empty and the second write dropped the first, and a rename
 * that read a file before an edit of it landed removed the file with the edit, which had reported success.
 * A queue per context, not per tool instance, so two `memoryTool`s on one context take turns too.
 */
export function inTurn<T>(context: ContextBlocks, command: () => Promise<T>): Promise<T> {
  const previous = tails.get(context) ?? Promise.resolve();
  const result = previous.then(command, command);
  const tail = result.catch(() => undefined);
  tails.set(context, tail);
  // Forget the chain once its last command settles.
  void tail.then(() => {
    if (tails.get(context) === tail) tails.delete(context);
  });
  return result;
}
