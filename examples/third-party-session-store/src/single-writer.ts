/** Runs writes one at a time: the checks and writes of one see no other write in between. */
export interface SingleWriter {
  run<T>(write: () => Promise<T>): Promise<T>;
}

/** A queue of writes as a promise chain: each write starts when the one before it has settled. */
export class WriteQueue implements SingleWriter {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(write: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(write);
    // A write that failed must not stop the ones queued behind it.
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

const queues = new WeakMap<object, WriteQueue>();

/**
 * The one queue of a database in this process, shared by every store opened on it (every session). A
 * queue per store instance would not do: two instances on one database would still race.
 */
export function writeQueueFor(database: object): WriteQueue {
  let queue = queues.get(database);
  if (queue === undefined) {
    queue = new WriteQueue();
    queues.set(database, queue);
  }
  return queue;
}
