/**
 * Runs tasks one after another per key. The AI SDK runs a step's tool calls in parallel: two appends to one
 * block must each see the other's result, whatever order a slow provider resolves them in.
 */
export class WriteQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // Forget the key once its last task settles, so labels that are no longer written cost nothing.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
