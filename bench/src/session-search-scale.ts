/**
 * Session search as a conversation grows: every LoCoMo conversation we have, repeated (each copy its own ids),
 * appended to ONE session (about 5,900 and 23,500 messages), then 100 of their questions asked with
 * `session.search(question, { limit: 10 })`, on SQLite (lean layout, better-sqlite3) and on Postgres
 * (`postgresBackend` over one `pg.Client`, a throwaway local cluster). The floor is the simplest thing doing
 * the same job, a plain table of the same texts and one bare statement:
 *
 * - SQLite: FTS5 (`key`, `content`, `porter unicode61`), its MATCH the question's content words (stopwords
 *   removed) ORed, `ORDER BY rank LIMIT 10`;
 * - Postgres: a generated `tsvector` column with a GIN index, the same words each `plainto_tsquery` ORed with
 *   `||`, ranked by `ts_rank`, top 10 (as the Postgres floor of search-floor.ts).
 *
 * Median and p95 of each, side by side, and the ratio, after both sides have answered as many other questions
 * untimed (a warm server: compiled code, prepared statements); the first search after the appends apart (it
 * catches the search fields up on both).
 *
 *   cd bench && node --import tsx src/session-search-scale.ts [--smoke] [--sqlite | --postgres] [--analyze]
 *
 * `--analyze`: Postgres's statistics brought up to date after the appends (`ANALYZE`), before the searches;
 * without it they are whatever autovacuum has reached, as for a session that has just grown.
 */
import { performance } from "node:perf_hooks";
import { postgresBackend } from "@contextblocks/postgres";
import { type SessionBackend, SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { fts5String, planQuery } from "@contextblocks/text";
import Database from "better-sqlite3";
import pg from "pg";
import { locomoDirectory, readLocomo } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";

const questionsAsked = 100;

function quantile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

/** One side of the comparison: a session backend, and the bare table beside it. */
interface Side {
  readonly backend: SessionBackend;
  /** Adds one text to the bare table. */
  add(key: string, text: string): Promise<void>;
  /** The bare statement for a question's content words (`null` when it has none). */
  floor(words: readonly string[]): Promise<unknown>;
  close(): Promise<void>;
  /** Brings the planner's statistics up to date (`--analyze`), as autovacuum's analyze eventually does. */
  analyze?(): Promise<void>;
}

function sqliteSide(): Side {
  const database = new Database(":memory:");
  const floor = new Database(":memory:");
  floor.exec("CREATE VIRTUAL TABLE entries USING fts5(key, content, tokenize='porter unicode61')");
  const insert = floor.prepare("INSERT INTO entries (key, content) VALUES (?, ?)");
  const bare = floor.prepare("SELECT key FROM entries WHERE entries MATCH ? ORDER BY rank LIMIT 10");
  return {
    backend: sqliteBackend(database),
    add: async (key, text) => {
      insert.run(key, text);
    },
    floor: async (words) => bare.all(words.map((word) => fts5String(word)).join(" OR ")),
    close: async () => {
      database.close();
      floor.close();
    },
  };
}

async function postgresSide(connectionString: string, table: string): Promise<Side> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query(`CREATE TABLE ${table} (key TEXT PRIMARY KEY, content TEXT NOT NULL,
    content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)`);
  await client.query(`CREATE INDEX ${table}_fts ON ${table} USING GIN (content_tsv)`);
  return {
    backend: postgresBackend(client),
    add: async (key, text) => {
      await client.query(`INSERT INTO ${table} (key, content) VALUES ($1, $2)`, [key, text]);
    },
    floor: async (words) => {
      const query = words.map((_, index) => `plainto_tsquery('english', $${index + 1})`).join(" || ");
      return (
        await client.query(
          `SELECT key FROM ${table}, (SELECT ${query} AS query) given
           WHERE content_tsv @@ given.query ORDER BY ts_rank(content_tsv, given.query) DESC LIMIT 10`,
          [...words],
        )
      ).rows;
    },
    close: () => client.end(),
    analyze: async () => {
      await client.query("ANALYZE");
    },
  };
}

/** A question's content words, as the floor's MATCH takes them (`null`: none). */
function contentWords(question: string): string[] | null {
  const plan = planQuery(question);
  return plan === null ? null : plan.terms.map((term) => term.word);
}

/** The rows of one backend's table: messages, median, p95, first search. */
async function measure(
  open: (copies: number) => Promise<Side>,
  texts: readonly string[],
  questions: readonly string[],
  warmUp: readonly string[],
  copiesList: readonly number[],
): Promise<string[][]> {
  const rows: string[][] = [];
  for (const copies of copiesList) {
    const side = await open(copies);
    const session = new SessionBuilder(side.backend).forSession("all").build();
    // One message and one search before the appends, as session-growth.ts does: the first search after them then
    // weighs what the appends left it (the index's catch-up), not the process's first run of the code. The
    // message first: a read of a database without session tables creates none, so a search there prepares no
    // statement of the search's own (the first write creates the tables).
    await session.appendMessage({
      id: "warm-up",
      role: "user",
      parts: [{ type: "text", text: texts[0] ?? "" }],
    });
    await side.add("warm-up", texts[0] ?? "");
    await session.search(questions[0] ?? "hello", { limit: 10 });
    let count = 0;
    for (let copy = 0; copy < copies; copy++) {
      for (const text of texts) {
        const id = `c${copy}-${count++}`;
        await session.appendMessage({
          id,
          role: count % 2 === 0 ? "user" : "assistant",
          parts: [{ type: "text", text }],
        });
        await side.add(id, text);
      }
    }
    if (process.argv.includes("--analyze")) await side.analyze?.();
    const started = performance.now();
    await session.search(questions[0] ?? "hello", { limit: 10 });
    const first = performance.now() - started;
    // Both sides answer other questions first, untimed: a server that has been answering for a while runs
    // compiled code and cached statements, and the first search is its own column.
    for (const question of warmUp) {
      const words = contentWords(question);
      if (words === null) continue;
      await session.search(question, { limit: 10 });
      await side.floor(words);
    }
    const ours: number[] = [];
    const floors: number[] = [];
    for (const question of questions) {
      const words = contentWords(question);
      if (words === null) continue;
      // Paired in one process, one after the other, the order alternating.
      for (const which of ours.length % 2 === 0 ? ["ours", "floor"] : ["floor", "ours"]) {
        const start = performance.now();
        if (which === "ours") await session.search(question, { limit: 10 });
        else await side.floor(words);
        (which === "ours" ? ours : floors).push(performance.now() - start);
      }
    }
    const median = [quantile(ours, 0.5), quantile(floors, 0.5)];
    const p95 = [quantile(ours, 0.95), quantile(floors, 0.95)];
    rows.push([
      count.toLocaleString("en-US"),
      `${median[0]?.toFixed(1)} / ${median[1]?.toFixed(1)} (${((median[0] ?? 0) / (median[1] || 1)).toFixed(2)}×)`,
      `${p95[0]?.toFixed(1)} / ${p95[1]?.toFixed(1)} (${((p95[0] ?? 0) / (p95[1] || 1)).toFixed(2)}×)`,
      `${first.toFixed(0)} (${(first / (median[0] || 1)).toFixed(1)}× a warm one)`,
    ]);
    await side.close();
  }
  return rows;
}

export async function run(
  smoke: boolean,
  backends: readonly ("sqlite" | "postgres")[] = ["sqlite", "postgres"],
): Promise<string> {
  const conversations = readLocomo(false);
  if (conversations === null) return `Skipped: ${locomoDirectory.pathname} is not on this machine.`;
  const texts = conversations.flatMap((conversation) =>
    conversation.turns.map((turn) => `${turn.speaker}: ${turn.text}`),
  );
  const asked = conversations.flatMap((conversation) =>
    conversation.questions.map((question) => question.question),
  );
  const step = Math.max(1, Math.floor(asked.length / questionsAsked));
  const questions = asked.filter((_, index) => index % step === 0).slice(0, smoke ? 10 : questionsAsked);
  // The warm-up asks other questions than the timed ones, as many.
  const warmUp = asked
    .filter((_, index) => index % step === Math.floor(step / 2) && step > 1)
    .slice(0, questions.length);
  const copiesList = smoke ? [1] : [2, 8];
  const header = (floor: string) => [
    "messages",
    `median: session.search / bare ${floor}`,
    `p95: session.search / bare ${floor}`,
    "first search, ms",
  ];
  const intro =
    `Every LoCoMo conversation in ${locomoDirectory.pathname} (${conversations.length}), repeated, in one session; ` +
    `${questions.length} of their questions, each \`session.search(question, { limit: 10 })\` paired with one bare ` +
    "statement of its content words ORed over a plain table of the same texts, after both answered as many other " +
    "questions untimed (warm code and statements; the first search, before them, is its own column: the first " +
    "after the appends, which one message and one search preceded; on SQLite the process has searched one conversation's turns before, untimed). Milliseconds.";
  const sections = [intro];
  if (backends.includes("sqlite")) {
    // A first round on one conversation's turns, not reported: the process compiles the search code on it, which
    // the first search at 5,520 messages paid otherwise (about 2.5 ms, as session-growth.ts found).
    await measure(
      async () => sqliteSide(),
      texts.slice(0, 600),
      questions.slice(0, 10),
      warmUp.slice(0, 10),
      [1],
    );
    const rows = await measure(async () => sqliteSide(), texts, questions, warmUp, copiesList);
    sections.push("", "SQLite (lean layout, better-sqlite3; the floor: FTS5, `ORDER BY rank`):", "");
    sections.push(markdownTable(header("FTS5"), rows));
  }
  if (backends.includes("postgres")) {
    sections.push(
      "",
      "Postgres (`postgresBackend`, one `pg.Client`; the floor: `tsvector` + GIN, `ts_rank`):",
      "",
    );
    let cluster: Awaited<ReturnType<typeof startThrowawayCluster>> | undefined;
    try {
      cluster = await startThrowawayCluster();
    } catch (error) {
      sections.push(`Skipped: no PostgreSQL server could be started here (${String(error).split("\n")[0]}).`);
    }
    if (cluster !== undefined) {
      const server = cluster;
      try {
        // Each size in its own database: a fresh table, as each SQLite size has.
        const rows = await measure(
          async (copies) => {
            const name = `scale_${copies}`;
            const admin = new pg.Client({ connectionString: server.connectionString });
            await admin.connect();
            await admin.query(`CREATE DATABASE ${name}`);
            await admin.end();
            const url = new URL(server.connectionString);
            url.pathname = `/${name}`;
            return postgresSide(url.toString(), "entries");
          },
          texts,
          questions,
          warmUp,
          copiesList,
        );
        sections.push(markdownTable(header("tsvector"), rows));
      } finally {
        server.stop();
      }
    }
  }
  return sections.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const only = (["sqlite", "postgres"] as const).filter((name) => process.argv.includes(`--${name}`));
  console.log(await run(process.argv.includes("--smoke"), only.length > 0 ? only : undefined));
}
