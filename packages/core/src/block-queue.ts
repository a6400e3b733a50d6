/**
 * Runs the reads and writes of one block one after another, in call order. The AI SDK runs a step's tool
 * calls in parallel: two appends to one block must each see the other's result, and a read that started
 * before a write must not land after it (its stale value would replace the written one in the cache, and a
 * later append would build on it), whatever order a slow provider answers in.
 */
export class BlockQueue {
  /** Made on the first task: an instance that only serves its stored prompt never allocates it. */
  #tails: Map<string, Promise<unknown>> | undefined;

  /** True when nothing of `label` is queued or running: a task started now runs in its turn. */
  idle(label: string): boolean {
    return this.#tails === undefined || !this.#tails.has(label);
  }

  run<T>(label: string, task: () => Promise<T>): Promise<T> {
    this.#tails ??= new Map();
    const tails = this.#tails;
    const previous = tails.get(label) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    tails.set(label, tail);
    // Forget the label once its last task settles, so labels no longer used cost nothing.
    void tail.then(() => {
      if (tails.get(label) === tail) tails.delete(label);
    });
    return result;
  }
}
