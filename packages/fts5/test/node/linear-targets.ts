/**
 * Entry points the linear-time guard (linear-time.test.ts) calls in a worker thread: a text written and
 * searched through a real provider on an in-memory better-sqlite3 database.
 */
import { isWellFormed } from "@contextblocks/core/store-kit";
import { openProvider } from "../support/databases.js";

/** The first `length` code units, without a surrogate pair cut in half. */
function prefix(text: string, length: number): string {
  const cut = text.slice(0, length);
  return isWellFormed(cut) ? cut : cut.slice(0, -1);
}

export async function writeAndSearch(text: string): Promise<void> {
  const { provider, database } = openProvider();
  if (isWellFormed(text)) {
    await provider.set(prefix(text, 1_000), text);
    await provider.set("other", `plain words ${prefix(text, 10_000)}`);
  }
  await provider.search(text);
  await provider.search(text.slice(0, 10_240));
  database.close();
}
