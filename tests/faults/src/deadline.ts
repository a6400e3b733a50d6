/**
 * A call that never settles is a finding, not a hang: `withDeadline` rejects once `ms` pass, naming the
 * call, so a writer retries it (as a client whose request timed out would) and a harness that would
 * otherwise wait forever reports where it stopped.
 */
export function withDeadline<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms);
  });
  return Promise.race([call, deadline]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/** The error of a call that did not settle in time. */
export class DeadlineExceeded extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not settle within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}
