/**
 * The first search after many appends against a warm one, on each layout of `SqliteSessionStore` over
 * better-sqlite3: the LoCoMo dev conversations' turns appended to one session (cycled with new ids until the
 * session holds 5,000 and 25,000 messages), then one search, then the same one 20 times more (their median). A layout whose
 * search index is built lazily catches up on the messages appended since in the first search's request;
 * the goal is a first search at most 3× a warm one. One search runs before the appends (the process has
 * searched before), so the first one timed pays for the appends, not for preparing its statements.
 *
 * Run: `node --import tsx src/session-growth.ts [--smoke]` (or through run-all: `--only=session-growth`).
 */
import type { SessionMessage } from "@contextblocks/sessions";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { readLocomo } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";
import { median } from "./statistics.js";

const SIZES = [5_000, 25_000] as const;
const SMOKE_SIZES = [300] as const;
const WARM_SEARCHES = 20;

type Layout = "keyed" | "lean" | "indexed";
const LAYOUTS: readonly Layout[] = ["keyed", "lean", "indexed"];

/** agents@0.22.0's tables (`agents/experimental/memory/session`): a database it wrote opens as indexed. */
const agentsTables = [
  `CREATE TABLE assistant_messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL DEFAULT '',
    parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL, created_at DATETIME DEFAULT CURRENT_TIMESTAMP)`,
  "CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id)",
  "CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id)",
];

interface Growth {
  layout: Layout;
  messages: number;
  appendSeconds: number;
  firstMs: number;
  warmMs: number;
}

async function measure(
  layout: Layout,
  size: number,
  turns: readonly SessionMessage[],
  questions: readonly string[],
) {
  const database = new Database(":memory:");
  if (layout === "indexed") for (const statement of agentsTables) database.prepare(statement).run();
  const tree = new MessageTree(
    new SqliteSessionStore(database, {
      sessionId: "growth",
      newDatabaseLayout: layout === "keyed" ? "keyed" : "lean",
    }),
  );
  // The process has searched before (its statements prepared): what is timed is the catch-up, not a cold start.
  await tree.appendMessage({ ...(turns[0] as SessionMessage), id: "warm-up" });
  await tree.searchMessages?.(questions.at(-1) as string, 10);
  const started = performance.now();
  for (let index = 0; index < size; index++) {
    const turn = turns[index % turns.length] as SessionMessage;
    await tree.appendMessage({ ...turn, id: `t${index}` });
  }
  const appendSeconds = (performance.now() - started) / 1000;
  const search = async (query: string) => {
    const begun = performance.now();
    await tree.searchMessages?.(query, 10);
    return performance.now() - begun;
  };
  // The same question first and warm, so the difference is what the first one caught up.
  const question = questions[0] as string;
  const firstMs = await search(question);
  const warm: number[] = [];
  for (let run = 0; run < WARM_SEARCHES; run++) warm.push(await search(question));
  database.close();
  return { layout, messages: size, appendSeconds, firstMs, warmMs: median(warm) } satisfies Growth;
}

export async function runSessionGrowth(smoke: boolean): Promise<string> {
  const conversations = readLocomo();
  if (conversations === null)
    return "## First search after many appends\n\nSkipped: the LoCoMo data is absent.";
  const turns: SessionMessage[] = conversations.flatMap((conversation) =>
    conversation.turns.map((turn, index) => ({
      id: `${conversation.name}-${index}`,
      role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
      parts: [{ type: "text" as const, text: `${turn.speaker}: ${turn.text}` }],
    })),
  );
  const questions = conversations.flatMap((conversation) =>
    conversation.questions.slice(0, 5).map((question) => question.question),
  );
  // Searches over real text compile the search code: the first row measured paid about 2.5 ms for it, whichever
  // layout it was (1.3× a warm search when measured later, 2.3× first). Each layout runs once on a small
  // session first, untimed, so the first search is weighed by what the appends left it, not by a cold process.
  for (const layout of LAYOUTS) await measure(layout, SMOKE_SIZES[0], turns, questions);
  const rows: Growth[] = [];
  for (const size of smoke ? SMOKE_SIZES : SIZES) {
    for (const layout of LAYOUTS) rows.push(await measure(layout, size, turns, questions));
  }
  return [
    "## First search after many appends",
    "",
    `The ${conversations.length} LoCoMo dev conversations' turns (${turns.length.toLocaleString("en-US")}) appended to one session on better-sqlite3, cycled until it holds that many messages; then one search (first) and the same search ${WARM_SEARCHES} times more (warm, median), a LoCoMo question, \`limit: 10\`; one search ran before the appends. Goal: first ≤ 3× warm on every layout.`,
    "",
    markdownTable(
      ["layout", "messages", "appends (s)", "first search (ms)", "warm search (ms)", "first / warm"],
      rows.map((row) => [
        row.layout,
        row.messages.toLocaleString("en-US"),
        row.appendSeconds.toFixed(1),
        row.firstMs.toFixed(1),
        row.warmMs.toFixed(1),
        `${(row.firstMs / row.warmMs).toFixed(2)}×`,
      ]),
      1,
    ),
  ].join("\n");
}

const isNodeMain =
  typeof process !== "undefined" &&
  typeof process.argv?.[1] === "string" &&
  process.argv[1].replaceAll("\\", "/").endsWith("src/session-growth.ts");

if (isNodeMain) {
  runSessionGrowth(process.argv.includes("--smoke")).then(
    (report) => console.log(report),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
