/** The last write time handed out per client, in milliseconds since the epoch. */
const lastWrite = new WeakMap<object, number>();

/**
 * The time of a registry write on SQLite, as `strftime('%Y-%m-%d %H:%M:%f', 'now')` spells it (UTC, milliseconds),
 * but at least a millisecond after the last one handed out for the same client. Sessions list by this time,
 * newest first: without the step, writes in one millisecond tied and listed by creation (a session renamed
 * right after another was created listed below it), and a clock that stands still or steps back (a Worker's
 * `Date.now()` does not move while its code runs) cannot tie them either. The step is per client, so per
 * database in one isolate, the one writer a Durable Object has.
 */
export function writeTime(client: object): string {
  const time = Math.max(Date.now(), (lastWrite.get(client) ?? Number.NEGATIVE_INFINITY) + 1);
  lastWrite.set(client, time);
  return new Date(time).toISOString().replace("T", " ").replace("Z", "");
}
