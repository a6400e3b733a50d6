import { databaseOf } from "@contextblocks/sql/store-kit";

/** The last write time handed out per database, in milliseconds since the epoch. */
const lastWrite = new WeakMap<object, number>();

/**
 * The time of a registry write on SQLite, as `strftime('%Y-%m-%d %H:%M:%f', 'now')` spells it (UTC, milliseconds),
 * but at least a millisecond after the last one handed out for the same database. Sessions list by this time,
 * newest first: without the step, writes in one millisecond tied and listed by creation (a session renamed
 * right after another was created listed below it), and a clock that stands still or steps back (a Worker's
 * `Date.now()` does not move while its code runs) cannot tie them either. The step is per database
 * (`databaseOf`), so every client of one database in an isolate steps one clock: per client, a session
 * created through `ctx.storage` after twenty through the Agent's `sql` listed below all twenty.
 */
export function writeTime(client: object): string {
  const database = databaseOf(client);
  const time = Math.max(Date.now(), (lastWrite.get(database) ?? Number.NEGATIVE_INFINITY) + 1);
  lastWrite.set(database, time);
  return new Date(time).toISOString().replace("T", " ").replace("Z", "");
}
