/**
 * Runs tasks one after another. Each storage operation is several statements with awaits between them;
 * two appends interleaved would both read the same latest leaf and fork the conversation.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
