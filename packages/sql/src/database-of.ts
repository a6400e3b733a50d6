/** The database each adapter's client runs on, by client. */
const databases = new WeakMap<object, object>();

/** Records that `client` runs on `database` (a Durable Object's storage, a better-sqlite3 `Database`). */
export function withDatabase<Client extends object>(client: Client, database: object): Client {
  databases.set(client, database);
  return client;
}

/**
 * The database `client` runs on, the same object for every client of one database (an Agent's `sql` and its
 * `ctx.storage`, two better-sqlite3 clients with their own `onStatement`); the client itself where its
 * adapter does not tell. For what must hold per database, not per client, such as the session registry's
 * write clock.
 */
export function databaseOf(client: object): object {
  return databases.get(client) ?? client;
}
