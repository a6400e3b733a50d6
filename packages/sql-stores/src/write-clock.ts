/** The last write time handed out per client, in milliseconds since the epoch. */
const lastWrite = new WeakMap<object, number>();

/**
 * The time of a registry write on SQLite, as `strftime('%Y-%m-%d %H:%M:%f', 'now')` spells it (UTC, milliseconds),
 * but at least a millisecond after the last one handed out for the same client. Sessions list by this time,
 * newest first: without the step, writes in one millisecond tied, and so did every write of one request on a
 * Durable Object, whose clock stands still while it runs (a session renamed after another was created listed
 * below it). The step is per client, so per database in one isolate, the one writer a Durable Object has.
 */
export function writeTime(client: object): string {
  const time = Math.max(Date.now(), (lastWrite.get(client) ?? Number.NEGATIVE_INFINITY) + 1);
  lastWrite.set(client, time);
  return new Date(time).toISOString().replace("T", " ").replace("Z", "");
}
