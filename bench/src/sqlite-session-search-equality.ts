/**
 * Whether a change to the SQLite session search (packages/sqlite) keeps its results: every LoCoMo question
 * asked with `session.search(question, { limit: 10 })` of the working tree's build and of another built
 * checkout ("before", `--before DIR`), on the same
 * messages, and the hits compared: ids, order, `matchedBy`, and the ids and positions of their context
 * turns. On the lean and keyed layouts, with and without message times (each session's date and time as
 * `createdAt`), with one database per conversation and with every conversation in one session, each sorted
 * both ways (`MessageSort`): by SQLite, as on better-sqlite3, and by FTS5, the statement a Durable Object runs
 * (a client that says it bills rows read). Prints the
 * number of questions whose hits differ in each case (0 expected) and the first few differences.
 *
 *   cd bench && node --import tsx src/sqlite-session-search-equality.ts --before ../../other-checkout [--smoke]
 *
 * Both checkouts must be built (`pnpm turbo run build`).
 */
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import * as sessionsAfter from "@contextblocks/sessions";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import * as sqliteAfter from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { locomoTurnTimes } from "./locomo-time.js";

type Layout = "lean" | "keyed";

/** Who sorts the matches: SQLite where rows read are not billed, FTS5 where they are (a Durable Object). */
type Sort = "SQLite sorts" | "FTS5 sorts";

interface Build {
  SessionBuilder: typeof sessionsAfter.SessionBuilder;
  sqliteBackend: typeof sqliteAfter.sqliteBackend;
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function beforeBuild(): Promise<Build | string> {
  const directory = option("--before");
  if (directory === undefined) return "give --before DIR, a built checkout to compare against";
  const root = directory.endsWith("/") ? directory : `${directory}/`;
  const sqlite = `${root}packages/sqlite/dist/index.js`;
  const sessions = `${root}packages/sessions/dist/index.js`;
  if (!existsSync(sqlite) || !existsSync(sessions))
    return `no build at ${root} (run pnpm turbo run build there)`;
  const [before, beforeSessions] = await Promise.all([
    import(pathToFileURL(sqlite).href) as Promise<typeof sqliteAfter>,
    import(pathToFileURL(sessions).href) as Promise<typeof sessionsAfter>,
  ]);
  return { SessionBuilder: beforeSessions.SessionBuilder, sqliteBackend: before.sqliteBackend };
}

/** What must stay the same: each hit's id, how it matched, and its context turns, in order. */
function shapeOf(
  hits: readonly {
    id: string;
    matchedBy?: string;
    context?: readonly { id: string; position?: string }[];
  }[],
): string {
  return JSON.stringify(
    hits.map((hit) => [hit.id, hit.matchedBy, (hit.context ?? []).map((turn) => [turn.id, turn.position])]),
  );
}

/** One session per group of conversations, on one build: the hits of every question of the group. */
async function searchAll(
  build: Build,
  layout: Layout,
  sort: Sort,
  withTimes: boolean,
  group: readonly LocomoConversation[],
): Promise<string[]> {
  const database = new Database(":memory:");
  const source = sort === "SQLite sorts" ? database : { ...fromBetterSqlite3(database), billsRows: true };
  const session = new build.SessionBuilder(build.sqliteBackend(source, { newDatabaseLayout: layout }))
    .forSession("locomo")
    .build();
  let turns = 0;
  for (const conversation of group) {
    const times = withTimes
      ? (locomoTurnTimes([conversation]).get(conversation.name) ?? new Map<string, Date>())
      : new Map<string, Date>();
    for (const turn of conversation.turns) {
      const time = times.get(turn.dia_id);
      await session.appendMessage({
        id: `${conversation.name}/${turn.dia_id}`,
        role: turns++ % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: `${turn.speaker}: ${turn.text}` }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    }
  }
  const shapes: string[] = [];
  for (const conversation of group) {
    for (const question of conversation.questions) {
      shapes.push(shapeOf(await session.search(question.question, { limit: 10 })));
    }
  }
  database.close();
  return shapes;
}

export async function run(smoke: boolean): Promise<string> {
  const conversations = readLocomo(false);
  if (conversations === null) return `Skipped: ${locomoDirectory.pathname} is not on this machine.`;
  const before = await beforeBuild();
  if (typeof before === "string") return `Skipped: ${before}.`;
  const after: Build = {
    SessionBuilder: sessionsAfter.SessionBuilder,
    sqliteBackend: sqliteAfter.sqliteBackend,
  };
  const used = smoke ? conversations.slice(0, 1) : conversations;
  const questions = used.reduce((total, conversation) => total + conversation.questions.length, 0);
  const lines = [
    `${questions} questions of ${used.length} LoCoMo conversations; questions whose hits differ:`,
  ];
  let differing = 0;
  for (const layout of ["lean", "keyed"] as const) {
    for (const sort of ["SQLite sorts", "FTS5 sorts"] as const) {
      for (const withTimes of [false, true]) {
        for (const grouping of ["one database per conversation", "all in one session"] as const) {
          const groups =
            grouping === "all in one session" ? [used] : used.map((conversation) => [conversation]);
          const examples: string[] = [];
          let count = 0;
          for (const group of groups) {
            const [old, now] = [
              await searchAll(before, layout, sort, withTimes, group),
              await searchAll(after, layout, sort, withTimes, group),
            ];
            const asked = group.flatMap((conversation) => conversation.questions.map((q) => q.question));
            old.forEach((shape, index) => {
              if (shape === now[index]) return;
              count++;
              if (examples.length < 3) examples.push(`  "${asked[index]}": ${shape} → ${now[index]}`);
            });
          }
          differing += count;
          lines.push(
            `- ${layout}, ${sort}, ${withTimes ? "with" : "without"} message times, ${grouping}: ${count}`,
          );
          lines.push(...examples);
        }
      }
    }
  }
  lines.push(differing === 0 ? "Identical." : `${differing} differ.`);
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await run(process.argv.includes("--smoke"));
  console.log(report);
  if (!report.endsWith("Identical.") && !report.startsWith("Skipped")) process.exitCode = 1;
}
