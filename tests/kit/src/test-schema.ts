import { randomUUID } from "node:crypto";
import pg from "pg";
import postgres from "postgres";
/**
 * A fresh, empty schema on the throwaway cluster: every connection opened through it has it as its
 * `search_path`, so the providers' unqualified tables land there and nowhere else. `drop()` closes every
 * connection it opened and drops the schema.
 */
export interface TestSchema {
  readonly name: string;
  /** A connected `pg.Client` in this schema. */
  client(): Promise<pg.Client>;
  /** A `pg.Pool` in this schema. */
  pool(size?: number): pg.Pool;
  /** A `postgres` (porsager) `sql` instance in this schema. */
  postgresJs(size?: number): postgres.Sql;
  drop(): Promise<void>;
}

export async function createTestSchema(connectionString: string): Promise<TestSchema> {
  const name = `test_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  const clients: pg.Client[] = [];
  const pools: pg.Pool[] = [];
  const postgresJsInstances: postgres.Sql[] = [];
  const options = `-c search_path=${name}`;
  return {
    name,
    async client() {
      const client = new pg.Client({ connectionString, options });
      await client.connect();
      clients.push(client);
      return client;
    },
    pool(size = 4) {
      const pool = new pg.Pool({ connectionString, options, max: size });
      pools.push(pool);
      return pool;
    },
    postgresJs(size = 4) {
      const instance = postgres(connectionString, {
        max: size,
        onnotice: () => undefined,
        connection: { search_path: name },
      });
      postgresJsInstances.push(instance);
      return instance;
    },
    async drop() {
      await Promise.all([
        ...clients.map((client) => client.end()),
        ...pools.map((pool) => pool.end()),
        ...postgresJsInstances.map((instance) => instance.end()),
      ]);
      await admin.query(`DROP SCHEMA ${name} CASCADE`);
      await admin.end();
    },
  };
}
