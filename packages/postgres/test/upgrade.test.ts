import { isContextError } from "@contextblocks/core";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import type { StatementReport } from "@contextblocks/sql";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTables, PostgresSearchProvider, PostgresSessionStore } from "../src/index.js";
import { POSTGRES_SCHEMA, SESSION_TABLES_VERSION } from "../src/schema.js";
import { createSchema, type TestSchema } from "./database.js";
import {
  type EarlierSchema,
  earlierDatabase,
  earlierOverlayIds,
  earlierOverlaySession,
  earlierSchemas,
} from "./earlier-schemas.js";
import { postgresTree } from "./message-tree.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

const ids = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

async function earlier(fixture: EarlierSchema): Promise<pg.Client> {
  const client = await schema.client();
  for (const statement of earlierDatabase(fixture)) await client.query(statement.text, statement.values);
  return client;
}

const sessionTables = [
  "assistant_messages",
  "assistant_compactions",
  "assistant_leaves",
  "assistant_token_calibration",
  "contextblocks_schema",
];

/**
 * The session tables' columns (with how each is stored) and indexes in the schema `name`, its name taken out of
 * index definitions.
 */
async function shape(client: pg.Client, name = schema.name): Promise<string[]> {
  const { rows } = await client.query<{ entry: string }>(
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type AS entry
       FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY ($2)
     UNION ALL
     SELECT 'index ' || replace(indexdef, $1 || '.', '') FROM pg_indexes
       WHERE schemaname = $1 AND tablename = ANY ($2)
     UNION ALL
     SELECT 'storage ' || c.relname || '.' || a.attname || ' ' || a.attstorage::text
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = ANY ($2) AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY entry`,
    [name, sessionTables],
  );
  return rows.map((row) => row.entry);
}

/** The shape of session tables this release creates on an empty database. */
async function currentShape(): Promise<string[]> {
  const fresh = await createSchema();
  try {
    const client = await fresh.client();
    await postgresTree(client, "chat").appendMessage({
      id: "x",
      role: "user",
      parts: [{ type: "text", text: "x" }],
    });
    return await shape(client, fresh.name);
  } finally {
    await fresh.drop();
  }
}

const isUnique = async (client: pg.Client) =>
  (
    await client.query<{ unique: boolean }>(
      "SELECT indisunique AS unique FROM pg_index WHERE indexrelid = to_regclass('idx_assistant_msg_id')",
    )
  ).rows.map((row) => row.unique);

describe.each(earlierSchemas.map((fixture) => [fixture.name, fixture] as const))(
  "session tables of %s, opened by this release",
  (_name, fixture) => {
    it("are brought to this release's schema (a unique index on id), their messages read, searched and appended to", async () => {
      const client = await earlier(fixture);
      const chat = postgresTree(client, "chat");
      expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2"]);
      expect(await isUnique(client)).toEqual([true]);
      expect(await shape(client)).toEqual(await currentShape());
      // The search fields stay in the row, where a search tests them (new rows: the stored ones stay put).
      for (const field of ["content_tsv", "context_tsv", "time_tsv"]) {
        expect(await shape(client)).toContain(`storage assistant_messages.${field} m`);
      }
      const { rows } = await client.query("SELECT part, version FROM contextblocks_schema");
      expect(rows).toEqual([{ part: "sessions", version: SESSION_TABLES_VERSION }]);
      await chat.appendMessage({
        id: "u3",
        role: "user",
        parts: [{ type: "text", text: "and its name again?" }],
      });
      expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2", "u3"]);
      expect(ids(await chat.searchMessages("lighthouse", 5))).toContain("u1");
      expect(ids(await postgresTree(client, "other").getHistory())).toEqual(["o1"]);
      // Overlays keep their order (two stored in the same transaction: by position); the newest is read alone.
      const shelf = new PostgresSessionStore(client, earlierOverlaySession);
      expect((await shelf.readOverlays()).map((overlay) => overlay.id)).toEqual([...earlierOverlayIds]);
      expect((await shelf.readNewestOverlay())?.id).toBe("c-second");
      // The new overlay's range is stored first (a range off the session's paths is refused).
      for (const id of ["s1", "s2", "s3", "s4"]) {
        await new MessageTree(shelf).appendMessage({ id, role: "user", parts: [{ type: "text", text: id }] });
      }
      const added = await new MessageTree(shelf).addCompaction("third", "s1", "s4");
      expect(await new MessageTree(shelf).addCompaction("third", "s1", "s4")).toEqual(added);
      expect((await shelf.readOverlays()).map((overlay) => overlay.id)).toEqual([
        ...earlierOverlayIds,
        added.id,
      ]);
      // agents' own provider still inserts overlays into the table (it names no position).
      await client.query(
        "INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id) VALUES ('c-agents', $1, 'agents', 's1', 's5')",
        [earlierOverlaySession],
      );
      expect((await shelf.readNewestOverlay())?.id).toBe("c-agents");
    });

    it("leave no entry waiting in a pending list of the search indexes, and an append adds none", async () => {
      const client = await earlier(fixture);
      const chat = postgresTree(client, "chat");
      await chat.getHistory();
      await chat.appendMessage({ id: "u3", role: "user", parts: [{ type: "text", text: "the lighthouse" }] });
      // gin_clean_pending_list moves what waits into the index itself and says how many pages it emptied.
      const { rows } = await client.query<{ pages: number }>(
        `SELECT gin_clean_pending_list(to_regclass(name))::int AS pages
         FROM unnest(ARRAY['idx_assistant_msg_fts', 'idx_assistant_msg_context_fts', 'idx_assistant_msg_time_fts']) AS name`,
      );
      expect(rows).toEqual([{ pages: 0 }, { pages: 0 }, { pages: 0 }]);
    });

    it("are migrated once: createTables again, or another client opening them, changes nothing", async () => {
      const client = await earlier(fixture);
      await postgresTree(client, "chat").getHistory();
      const migrated = await shape(client);
      // A rewrite of the table (the search fields folded again) would give it a new file.
      const file = async () =>
        (await client.query("SELECT relfilenode FROM pg_class WHERE oid = to_regclass('assistant_messages')"))
          .rows;
      const before = await file();
      await createTables(client);
      expect(await file()).toEqual(before);
      const other = await schema.client();
      expect(ids(await postgresTree(other, "chat").getHistory())).toEqual(["u1", "a1", "u2"]);
      expect(await shape(client)).toEqual(migrated);
    });

    it("writers on four connections opening them at once all open them, migrated whole", async () => {
      await earlier(fixture);
      const clients = await Promise.all(Array.from({ length: 4 }, () => schema.client()));
      const histories = await Promise.all(
        clients.map((client, index) => postgresTree(client, index % 2 ? "other" : "chat").getHistory()),
      );
      expect(histories.map(ids)).toEqual([["u1", "a1", "u2"], ["o1"], ["u1", "a1", "u2"], ["o1"]]);
      expect(await shape(clients[0] as pg.Client)).toEqual(await currentShape());
    });
  },
);

describe("messages an earlier release stored with words outside ASCII", () => {
  const latest = earlierSchemas.at(-1) as EarlierSchema;

  it("are found by those words without their diacritics, as is what agents' own code stores", async () => {
    const client = await earlier(latest);
    // As that release's append stored them: search fields written (state 2), the context the turns before.
    const stored = (id: string, parentId: string | null, text: string, context: string) =>
      client.query(
        `INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content, context_text,
           search_state) VALUES ($1, 'trip', $2, 'user', $3, $4, $5, 2)`,
        [id, parentId, JSON.stringify({ id, role: "user", parts: [{ type: "text", text }] }), text, context],
      );
    await stored("t1", null, "We stayed at the Hôtel Ångström.", "");
    await stored("t2", "t1", "Breakfast was included.", "We stayed at the Hôtel Ångström.\n");
    // agents' own provider names none of our columns.
    await client.query(
      `INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content)
       VALUES ('t3', 'trip', 't2', 'user', '{}', 'Then a crème brûlée at the Café.')`,
    );
    const trip = postgresTree(client, "trip");
    expect(ids(await trip.searchMessages("hotel angstrom", 5))).toEqual(["t1"]);
    expect(ids(await trip.searchMessages("creme brulee cafe", 5))).toEqual(["t3"]);
    // The turn after holds the turn before as its context, folded too (searched, never returned).
    const { rows } = await client.query(
      "SELECT id FROM assistant_messages WHERE context_tsv @@ plainto_tsquery('english', 'hotel angstrom')",
    );
    expect(rows).toEqual([{ id: "t2" }]);
  });
});

describe("session tables an earlier release left with an id in two sessions", () => {
  const ordinary = earlierSchemas.find((fixture) => fixture.name.includes("bfd6ec8")) as EarlierSchema;

  it("are refused on open with an error naming the ids and their sessions, and left as they were; opened once fixed", async () => {
    const client = await earlier(ordinary);
    await client.query(
      "INSERT INTO assistant_messages (id, session_id, role, content) VALUES ('u1', 'copy', 'user', '{}'), ('a1', 'copy', 'user', '{}')",
    );
    const before = await shape(client);
    const refused = await postgresTree(client, "chat")
      .getHistory()
      .catch((error: unknown) => error);
    expect(isContextError(refused) && refused.code).toBe("PROVIDER_FAILED");
    const message = (refused as Error).message;
    expect(message).toContain("2 message ids are stored in more than one session");
    expect(message).toContain('"a1" in sessions "chat", "copy"');
    expect(message).toContain('"u1" in sessions "chat", "copy"');
    // Nothing changed: the ordinary index and no marker.
    expect(await shape(client)).toEqual(before);
    expect(await isUnique(client)).toEqual([false]);
    // createTables reports the same.
    await expect(createTables(client)).rejects.toThrow(/"u1" in sessions "chat", "copy"/);
    await client.query("DELETE FROM assistant_messages WHERE session_id = 'copy'");
    expect(ids(await postgresTree(client, "chat").getHistory())).toEqual(["u1", "a1", "u2"]);
    expect(await isUnique(client)).toEqual([true]);
  });
});

describe("opening up-to-date session tables", () => {
  it("reads the version marker once per client: one statement, then none", async () => {
    const client = await schema.client();
    await createTables(client);
    const reports: StatementReport[] = [];
    const store = postgresTree(client, { sessionId: "chat", onStatement: (report) => reports.push(report) });
    await store.getHistory();
    const checks = () => reports.filter((report) => /contextblocks_schema|to_regclass/.test(report.text));
    expect(checks()).toHaveLength(1);
    await store.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
    await store.getHistory();
    expect(checks()).toHaveLength(1);
  });
});

/**
 * `POSTGRES_SCHEMA` as the release before wrote it: the words of addresses and paths split by a lookahead,
 * `(?=[[:alnum:]])`, which this release writes as a group it puts back (no `?`, which agents' `PostgresConnection`
 * takes as a placeholder). The same split, so its tables are current.
 */
function schemaWithLookahead(): string {
  const earlierSplit = POSTGRES_SCHEMA.replaceAll(
    "E'[@./:\\\\\\\\]+([[:alnum:]])', E' \\\\1'",
    "E'[@./:\\\\\\\\]+(?=[[:alnum:]])', ' '",
  ).replaceAll(
    "(pg_get_expr(d.adbin, d.adrelid) LIKE '%]+([[:alnum:]])%'\n      OR pg_get_expr(d.adbin, d.adrelid) LIKE '%]+(_=[[:alnum:]])%'))",
    "pg_get_expr(d.adbin, d.adrelid) LIKE '%(?=[[:alnum:]])%')",
  );
  // Three fields' expressions and the two checks of whether they are current.
  expect(earlierSplit.split("(?=[[:alnum:]])").length - 1).toBe(5);
  return earlierSplit;
}

describe("tables the release before created, its search fields split by a lookahead", () => {
  it("are opened as they are, never rewritten, and their addresses' words found", async () => {
    const client = await schema.client();
    await client.query(schemaWithLookahead());
    const files = async () =>
      (
        await client.query(
          `SELECT relname, relfilenode FROM pg_class
           WHERE oid IN (to_regclass('assistant_messages'), to_regclass('cf_agents_search_entries')) ORDER BY relname`,
        )
      ).rows;
    const before = await files();
    const tree = postgresTree(client, "chat");
    await tree.appendMessage({
      id: "m1",
      role: "user",
      parts: [{ type: "text", text: "Write to master@harbour-office.example about the ferry." }],
    });
    const notes = new PostgresSearchProvider(client, { label: "notes" });
    await notes.set("harbour", "the harbour master reads master@harbour-office.example");
    await createTables(client);
    expect(await files()).toEqual(before);
    expect((await tree.searchMessages("harbour-office", 10)).map((hit) => hit.id)).toEqual(["m1"]);
    expect(await notes.search("example")).toContain("harbour master");
  });
});
