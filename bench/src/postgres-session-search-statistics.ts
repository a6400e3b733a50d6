/**
 * The Postgres session search before and after the table's statistics exist, the statement as a git revision
 * has it ("before") against the working tree's, paired in one process. Every LoCoMo conversation, repeated
 * (each copy its own ids), is appended to ONE session through `PostgresSessionStore` in chains of 100 (as
 * session-search-scale.ts sizes them: 5,520 and 22,080 messages), with autovacuum off for the table, so the
 * first phase runs on a table Postgres has never analyzed (`pg_class.reltuples` -1: what a session that has
 * just grown gets until autovacuum's analyze reaches it). Then 100 of the questions are searched with both
 * statements, one after the other, the order alternating, both sent as the store sends them (named prepared
 * statements); then `ANALYZE`, and the same again.
 *
 * Prints, per size and phase, each statement's median and p95 and their ratio, and the searches whose results
 * differ (the same ids in the same order, the same `own_hit`, relevance within 1e-9; 0 expected); then, per
 * statement, the searches whose results differ between the two phases (the plan alone changed).
 *
 * With `--stale`, the first phase's table was analyzed once, after the first chain of 100 messages, and not since
 * (statistics that lag behind a session that grew after them), instead of never.
 *
 *   cd bench && node --import tsx src/postgres-session-search-statistics.ts [--before main] [--stale] [--smoke]
 */
import { performance } from "node:perf_hooks";
import { PostgresSessionStore } from "@contextblocks/postgres";
import type { SessionMessage } from "@contextblocks/sessions";
import { candidateCount, MessageTree } from "@contextblocks/sessions/store-kit";
import { fromPg } from "@contextblocks/sql";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { planQuery } from "@contextblocks/text";
import pg from "pg";
import { locomoDirectory, readLocomo } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";
import {
  type SearchRow,
  sameRows,
  statementAt,
  workingStatement,
} from "./postgres-search-statement-revisions.js";

const questionsAsked = 100;
const index = process.argv.indexOf("--before");
const before = index >= 0 ? (process.argv[index + 1] ?? "main") : "main";
const smoke = process.argv.includes("--smoke");
/** `--stale`: the first phase's table was analyzed once, when the session held its first 100 messages. */
const stale = process.argv.includes("--stale");
const limit = candidateCount(10, 1_000);

function quantile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

const conversations = readLocomo(smoke);
if (conversations === null) {
  console.log(`Skipped: ${locomoDirectory.pathname} is not on this machine.`);
  process.exit(0);
}
const texts = conversations.flatMap((conversation) =>
  conversation.turns.map((turn) => `${turn.speaker}: ${turn.text}`),
);
const questions = conversations
  .flatMap((conversation) => conversation.questions.map((question) => question.question))
  .filter((_, position, all) => position % Math.max(1, Math.floor(all.length / questionsAsked)) === 0)
  .slice(0, smoke ? 10 : questionsAsked);
const old = await statementAt(before);
const current = await workingStatement();
const cluster = await startThrowawayCluster();
process.once("SIGTERM", () => {
  cluster.stop();
  process.exit(143);
});
const rows: string[][] = [];
/** Per size: how many searches on the never-analyzed table differ from the same statement's on the analyzed one. */
const unsettled: string[] = [];
let differing = 0;
try {
  for (const copies of smoke ? [1] : [2, 8]) {
    const admin = new pg.Client({ connectionString: cluster.connectionString });
    await admin.connect();
    await admin.query(`CREATE DATABASE statistics_${copies}`);
    await admin.end();
    const url = new URL(cluster.connectionString);
    url.pathname = `/statistics_${copies}`;
    const connection = new pg.Client({ connectionString: url.toString() });
    await connection.connect();
    try {
      const client = fromPg(connection);
      const tree = new MessageTree(new PostgresSessionStore(client, { sessionId: "all" }));
      const messages: SessionMessage[] = [];
      for (let copy = 0; copy < copies; copy++) {
        for (const text of texts) {
          messages.push({
            id: `c${copy}-${messages.length}`,
            role: messages.length % 2 === 0 ? "user" : "assistant",
            parts: [{ type: "text", text }],
          });
        }
      }
      let parent: string | null = null;
      for (let start = 0; start < messages.length; start += 100) {
        const chain = messages.slice(start, start + 100);
        await tree.appendChain(chain, parent);
        parent = chain.at(-1)?.id ?? parent;
        // The first chain created the tables: from here on only the ANALYZE below brings statistics (and,
        // with `--stale`, one taken now: statistics that lag behind the session's growth).
        if (start === 0) {
          await connection.query("ALTER TABLE assistant_messages SET (autovacuum_enabled = false)");
          if (stale) await connection.query("ANALYZE assistant_messages");
        }
      }
      // Each phase's results, by statement (0 before, 1 the working tree) and question.
      const answers: SearchRow[][][][] = [];
      for (const phase of [stale ? "analyzed at 100 messages" : "never analyzed", "analyzed"]) {
        const phaseAnswers: SearchRow[][][] = [[], []];
        answers.push(phaseAnswers);
        if (phase === "analyzed") await connection.query("ANALYZE assistant_messages");
        const { rows: table } = await connection.query<{ reltuples: number }>(
          "SELECT reltuples FROM pg_class WHERE relname = 'assistant_messages'",
        );
        const times: [number[], number[]] = [[], []];
        let differ = 0;
        for (const [asked, question] of questions.entries()) {
          const plan = planQuery(question);
          if (plan === null) continue;
          const statements = [old, current].map((build) => build("all", plan, limit));
          const results: SearchRow[][] = [[], []];
          for (const turn of [0, 1]) {
            const which = (asked + turn) % 2;
            const statement = statements[which];
            if (statement === undefined) continue;
            const start = performance.now();
            results[which] = await client.run<SearchRow>(statement);
            times[which]?.push(performance.now() - start);
          }
          phaseAnswers[0]?.push(results[0] ?? []);
          phaseAnswers[1]?.push(results[1] ?? []);
          if (!sameRows(results[0] ?? [], results[1] ?? [])) {
            differ++;
            if (differ <= 3) process.stderr.write(`  differs: ${phase} ${JSON.stringify(question)}\n`);
          }
        }
        differing += differ;
        const [oldTimes, newTimes] = times;
        const cell = (share: number) => {
          const [was, now] = [quantile(oldTimes, share), quantile(newTimes, share)];
          return `${was.toFixed(1)} / ${now.toFixed(1)} (${(now / (was || 1)).toFixed(2)}×)`;
        };
        rows.push([
          messages.length.toLocaleString("en-US"),
          `${phase} (reltuples ${table[0]?.reltuples})`,
          cell(0.5),
          cell(0.95),
          String(differ),
        ]);
      }
      const [never, analyzed] = answers;
      const changed = (which: number) =>
        (never?.[which] ?? []).filter((result, asked) => !sameRows(result, analyzed?.[which]?.[asked] ?? []))
          .length;
      unsettled.push(
        `${messages.length.toLocaleString("en-US")} messages: ${changed(0)} of ${before}'s searches and ` +
          `${changed(1)} of the working tree's differ between the two phases`,
      );
    } finally {
      await connection.end();
    }
  }
} finally {
  cluster.stop();
}
console.log(
  `Every LoCoMo conversation in ${locomoDirectory.pathname} (${conversations.length}), repeated, in one session; ` +
    `${questions.length} of their questions, each searched with ${before}'s statement and the working tree's. Milliseconds.\n`,
);
console.log(
  markdownTable(
    ["messages", "statistics", `median: ${before} / working tree`, `p95: ${before} / working tree`, "differ"],
    rows,
  ),
);
console.log(
  "\nThe same statement on the never-analyzed table and on the analyzed one (a plan that adds a message's shares " +
    "in another order can swap two messages of equal score):\n",
);
for (const line of unsettled) console.log(`- ${line}`);
process.exitCode = differing === 0 ? 0 : 1;
