/**
 * Whether a change to the Postgres session search (packages/postgres/src/message-search-statement.ts, and the
 * search fields an append writes) keeps its results. Every LoCoMo conversation is appended through
 * `PostgresSessionStore` (as session-search-selection.ts builds them: one message `"<speaker>: <text>"` per turn,
 * roles alternating), once with each turn's session time as its `createdAt` and once without, both in one
 * session of all conversations and in a session per conversation. Then:
 *
 * - every stored row's search fields (`speaker`, `time_text`) must be what the search's catch-up derives from
 *   the row (`messageFieldsOf` of its stored message, its day else the row's `created_at`), with nothing left
 *   for the catch-up to do (`search_state` 2);
 * - every question is searched with the statement as a git revision has it ("before") and as the working tree
 *   has it ("after"), under the default ranking and two others (the near turns' window on, the day's share and
 *   dated boost off; the turns around a message at 0.3, no speaker boost): the same ids in the same order, the
 *   same `own_hit`, relevance within 1e-9.
 *
 * The "before" statement is sent unnamed (`namedStatements: false`: parsed and planned with its values on every
 * call), the working tree's through the default adapter (a named prepared statement: after five runs of a text
 * Postgres may keep one generic plan for it), so the comparison covers how statements are sent too.
 *
 * Prints the count of differing searches (0 expected) and the median time of each statement, run in turns.
 *
 *   cd bench && node --import tsx src/postgres-session-search-equality.ts [--before main] [--smoke]
 */
import { performance } from "node:perf_hooks";
import { PostgresSessionStore } from "@contextblocks/postgres";
import { defaultPostgresSearchRanking } from "@contextblocks/postgres/store-kit";
import type { SessionMessage } from "@contextblocks/sessions";
import {
  candidateCount,
  MessageTree,
  parseStoredMessage,
  type SearchRanking,
} from "@contextblocks/sessions/store-kit";
import { fromPg, type SqlStatement } from "@contextblocks/sql";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { messageFieldsOf, planQuery } from "@contextblocks/text";
import pg from "pg";
import { type LocomoConversation, locomoDirectory, readLocomo } from "./locomo-data.js";
import { locomoTurnTimes } from "./locomo-time.js";
import {
  type SearchRow,
  sameRows,
  statementAt,
  workingStatement,
} from "./postgres-search-statement-revisions.js";

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const before = option("--before", "main");
const smoke = process.argv.includes("--smoke");
const limit = candidateCount(10, 1_000);
const rankings: SearchRanking[] = [
  defaultPostgresSearchRanking,
  { ...defaultPostgresSearchRanking, nearShare: 0.3, dayShare: 0, datedBoost: 0 },
  { ...defaultPostgresSearchRanking, contextWeight: 0.3, afterShare: 0.3, speakerBoost: 0 },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The conversations' turns appended to `sessionId` in chains of 100 (one append statement each). */
async function fill(
  client: ReturnType<typeof fromPg>,
  sessionId: string,
  conversations: readonly LocomoConversation[],
  withTimes: boolean,
): Promise<void> {
  const tree = new MessageTree(new PostgresSessionStore(client, { sessionId }));
  const messages: SessionMessage[] = [];
  for (const conversation of conversations) {
    const times = withTimes
      ? (locomoTurnTimes([conversation]).get(conversation.name) ?? new Map<string, Date>())
      : new Map<string, Date>();
    conversation.turns.forEach((turn, index) => {
      const time = times.get(turn.dia_id);
      messages.push({
        id: `${sessionId}:${conversation.name}:${turn.dia_id}`,
        role: index % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: `${turn.speaker}: ${turn.text}` }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    });
  }
  let parent: string | null = null;
  for (let start = 0; start < messages.length; start += 100) {
    const chain = messages.slice(start, start + 100);
    await tree.appendChain(chain, parent);
    parent = chain.at(-1)?.id ?? parent;
  }
}

/** Rows whose search fields are not what the catch-up derives from them, or are left for it to write. */
async function wrongFields(connection: pg.Client): Promise<number> {
  const { rows } = await connection.query<{
    id: string;
    role: string;
    content: string;
    text_content: string;
    created_at: Date;
    speaker: string;
    time_text: string;
    search_state: number;
  }>(
    "SELECT id, role, content, text_content, created_at, speaker, time_text, search_state FROM assistant_messages",
  );
  let wrong = 0;
  for (const row of rows) {
    const message = parseStoredMessage(row.content);
    const fields = messageFieldsOf(
      { role: row.role, metadata: message?.metadata, createdAt: message?.createdAt ?? row.created_at },
      row.text_content,
    );
    if (fields.speaker !== row.speaker || (fields.time ?? "") !== row.time_text || row.search_state !== 2) {
      wrong++;
      if (wrong <= 3) process.stderr.write(`  fields differ: ${JSON.stringify([row, fields])}\n`);
    }
  }
  return wrong;
}

const conversations = readLocomo(smoke);
if (conversations === null) {
  console.log(`Skipped: ${locomoDirectory.pathname} is not on this machine.`);
  process.exit(0);
}
const cluster = await startThrowawayCluster();
process.once("SIGTERM", () => {
  cluster.stop();
  process.exit(143);
});
const connection = new pg.Client({ connectionString: cluster.connectionString });
let differing = 0;
try {
  await connection.connect();
  const client = fromPg(connection);
  const clients = [fromPg(connection, { namedStatements: false }), client];
  const old = await statementAt(before);
  const current = await workingStatement();
  const sessions: { id: string; conversations: LocomoConversation[] }[] = [];
  for (const withTimes of [true, false]) {
    const suffix = withTimes ? "times" : "no-times";
    const all = { id: `all-${suffix}`, conversations };
    const each = conversations.map((conversation) => ({
      id: `${conversation.name}-${suffix}`,
      conversations: [conversation],
    }));
    for (const session of [all, ...each]) {
      await fill(client, session.id, session.conversations, withTimes);
      sessions.push(session);
    }
  }
  await connection.query("VACUUM ANALYZE assistant_messages");
  const wrong = await wrongFields(connection);
  console.log(`search fields: ${wrong} rows differ from the catch-up's or wait for it`);
  differing += wrong;
  for (const [rankingIndex, ranking] of rankings.entries()) {
    const times: [number[], number[]] = [[], []];
    let searches = 0;
    let differ = 0;
    for (const session of sessions) {
      for (const question of session.conversations.flatMap((conversation) => conversation.questions)) {
        const plan = planQuery(question.question);
        if (plan === null) continue;
        const statements = [old, current].map((build) => build(session.id, plan, limit, ranking));
        const results: SearchRow[][] = [[], []];
        for (const turn of [0, 1]) {
          const which = (searches + turn) % 2;
          const start = performance.now();
          results[which] = await (clients[which] ?? client).run<SearchRow>(statements[which] as SqlStatement);
          times[which]?.push(performance.now() - start);
        }
        searches++;
        if (!sameRows(results[0] ?? [], results[1] ?? [])) {
          differ++;
          if (differ <= 3) {
            process.stderr.write(`  differs: ${session.id} ${JSON.stringify(question.question)}\n`);
          }
        }
      }
    }
    differing += differ;
    const [oldTimes, newTimes] = times;
    console.log(
      `ranking ${rankingIndex} ${JSON.stringify(ranking)}: ${searches} searches in ${sessions.length} sessions, ` +
        `${differ} differ; median ${before} ${median(oldTimes).toFixed(2)} ms, working tree ${median(newTimes).toFixed(2)} ms`,
    );
  }
} finally {
  await connection.end();
  cluster.stop();
}
console.log(differing === 0 ? "same fields, same results in the same order" : `${differing} differ`);
process.exitCode = differing === 0 ? 0 : 1;
