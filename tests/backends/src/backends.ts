import { postgresBackend } from "@contextblocks/postgres";
import type { SessionBackend } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { sqliteBackend } from "@contextblocks/sqlite";
import { createTestSchema } from "@contextblocks/test-kit/postgres";
import { openTemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { inject } from "vitest";

/**
 * Every backend the integration tests run on, as kysely's tests loop over dialects: a scenario is written
 * once and `describe.each(backends)` runs it on each. A backend starts on empty storage; `restart()` opens
 * a second backend on the same storage, as a process after a restart (or another Worker instance) finds it.
 */
export interface BackendUnderTest {
  readonly name: string;
  open(): Promise<OpenBackend>;
}

/** A backend on fresh storage, and what a test needs around it. */
export interface OpenBackend {
  readonly backend: SessionBackend;
  /** A new backend (and, where there is one, a new connection) on the same storage. */
  restart(): Promise<SessionBackend>;
  /** Every stored row of every table as text: what a deletion must leave no trace in. */
  everyRow(): Promise<string[]>;
  close(): Promise<void>;
}

const memory: BackendUnderTest = {
  name: "memory",
  async open() {
    const backend = inMemoryBackend();
    const { sessions, blocks, runState, registry } = backend;
    return {
      backend,
      restart: async () => inMemoryBackend({ sessions, blocks, runState, registry }),
      // Run state is kept privately in memory: tests read it through `runState.load`.
      everyRow: async () =>
        [...blocks.blocks, ...sessions.records, ...sessions.overlays, ...(await registry.list())].map((row) =>
          JSON.stringify(row),
        ),
      close: async () => undefined,
    };
  },
};

/** SQLite on a better-sqlite3 file, in one of the layouts a new database can get. */
function sqlite(layout: "lean" | "keyed"): BackendUnderTest {
  return {
    name: `sqlite (${layout})`,
    async open() {
      const file = openTemporaryDatabase();
      const options = { newDatabaseLayout: layout };
      return {
        backend: sqliteBackend(file.database, options),
        restart: async () => sqliteBackend(file.reopen(), options),
        everyRow: async () => {
          const tables = file.database
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .all() as { name: string }[];
          // FTS5's shadow tables hold tokens, not rows a reader sees; the virtual table itself is read.
          return tables
            .filter(
              ({ name }) => !/_(data|idx|docsize|config|content)$/.test(name) && name !== "sqlite_sequence",
            )
            .flatMap(({ name }) =>
              file.database
                .prepare(`SELECT * FROM "${name}"`)
                .all()
                .map((row) => `${name}: ${JSON.stringify(row)}`),
            );
        },
        close: async () => file.remove(),
      };
    },
  };
}

const postgres: BackendUnderTest = {
  name: "postgres",
  async open() {
    const schema = await createTestSchema(inject("postgresUrl"));
    const client = await schema.client();
    return {
      backend: postgresBackend(client),
      restart: async () => postgresBackend(await schema.client()),
      everyRow: async () => {
        const { rows: tables } = await client.query<{ name: string }>(
          "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
          [schema.name],
        );
        const rows: string[] = [];
        for (const { name } of tables) {
          const result = await client.query<{ row: string }>(
            `SELECT to_jsonb(t)::text AS row FROM ${name} t`,
          );
          for (const { row } of result.rows) rows.push(`${name}: ${row}`);
        }
        return rows;
      },
      close: () => schema.drop(),
    };
  },
};

export const backends: readonly BackendUnderTest[] = [memory, sqlite("lean"), sqlite("keyed"), postgres];
