/**
 * agents@0.32.0's session search on LoCoMo: hit@10 and MRR@10 of `session.search` from `agents/sessions`
 * (Cloudflare agents' `Sessions` capability) on the LoCoMo dev split, scored as bench/src/locomo-retrieval.ts
 * scores `@contextblocks/sessions` (locomo-scoring.ts), so the two tables read side by side.
 *
 * `Sessions` runs only on a Durable Object, so this starts agents-sessions-locomo-worker.ts in workerd
 * (wrangler's `unstable_startWorker`, as the row-cost benches do) and posts each conversation to its own
 * object: every turn appended in order as agents users append (`session.appendMessage`, id = the turn's
 * `dia_id`, text = `"<speaker>: <text>"`, roles alternating), then every question with evidence asked as
 * `session.search(question, { limit: 10 })`: `agents/sessions` gives the model no tool of its own for it (Think
 * calls the same method), and its docs search this way (`session.search("deployment failed")`). The data is read at run time from the LoCoMo directory
 * (`LOCOMO_DIRECTORY`, else beside the repository; locomo-data.ts) and sent in the request body: nothing is
 * written to the repository. Without the data the bench prints a notice and exits 0.
 *
 * A control checks the harness: for each question, five consecutive words of its first evidence turn are
 * searched the same way; agents finding that turn shows appends and search work, so a low score on the
 * questions is its query handling.
 *
 *   cd bench && node --import tsx src/agents-sessions-locomo.ts            # every conversation and question
 *   cd bench && node --import tsx src/agents-sessions-locomo.ts --smoke    # one conversation, 30 questions
 */
import { performance } from "node:perf_hooks";
import type { LocomoSessionsRequest, LocomoSessionsResponse } from "./agents-sessions-locomo-worker.js";
import { withLocalWorker } from "./local-worker.js";
import { type LocomoConversation, readLocomo } from "./locomo-data.js";
import { type LocomoScores, locomoTable, scoreLocomo, shareOf } from "./locomo-scoring.js";
import { markdownTable } from "./markdown.js";

/** How many consecutive words of an evidence turn the control query takes. */
const controlWords = 5;

/** Five consecutive words from the middle of the first evidence turn's text (all of a shorter turn). */
function controlQuery(conversation: LocomoConversation, evidence: readonly string[]): string | null {
  const turn = conversation.turns.find((candidate) => evidence.includes(candidate.dia_id));
  if (turn === undefined) return null;
  const words = turn.text.split(/\s+/).filter(Boolean);
  const start = Math.max(0, Math.floor((words.length - controlWords) / 2));
  return words.slice(start, start + controlWords).join(" ");
}

interface ConversationRun {
  /** Ids returned for each question. */
  questions: string[][];
  /** Ids returned for each question's control query (empty when its evidence names no stored turn). */
  controls: string[][];
}

export interface AgentsSessionsLocomoResult {
  markdown: string;
  questions: LocomoScores;
  controls: LocomoScores;
}

export async function runAgentsSessionsLocomo(smoke: boolean): Promise<AgentsSessionsLocomoResult | null> {
  const conversations = readLocomo(smoke);
  if (conversations === null) return null;
  const entrypoint = decodeURIComponent(
    new URL("./agents-sessions-locomo-worker.ts", import.meta.url).pathname,
  );
  const started = performance.now();
  const runs = await withLocalWorker(
    {
      name: "contextblocks-agents-sessions-locomo",
      entrypoint,
      durableObject: { className: "LocomoSessionsObject", binding: "LOCOMO_SESSIONS" },
    },
    async (worker) => {
      const runs: ConversationRun[] = [];
      for (const conversation of conversations) {
        const controls = conversation.questions.map((question) =>
          controlQuery(conversation, question.evidence),
        );
        const body: LocomoSessionsRequest = {
          turns: conversation.turns.map((turn, index) => ({
            id: turn.dia_id,
            role: index % 2 === 0 ? "user" : "assistant",
            text: `${turn.speaker}: ${turn.text}`,
          })),
          queries: [
            ...conversation.questions.map((question) => question.question),
            ...controls.filter((query): query is string => query !== null),
          ],
        };
        const response = await worker.fetch(
          `http://locomo-sessions/?conversation=${encodeURIComponent(conversation.name)}`,
          { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
        );
        if (!response.ok) throw new Error(`${conversation.name}: ${await response.text()}`);
        const answer = (await response.json()) as LocomoSessionsResponse;
        if (answer.appended !== conversation.turns.length) {
          throw new Error(
            `${conversation.name}: ${answer.appended} of ${conversation.turns.length} turns were appended`,
          );
        }
        const questionCount = conversation.questions.length;
        const controlResults = answer.results.slice(questionCount);
        runs.push({
          questions: answer.results.slice(0, questionCount),
          controls: controls.map((query) => (query === null ? [] : (controlResults.shift() ?? []))),
        });
      }
      return runs;
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const questions = scoreLocomo(
    conversations,
    runs.map((run) => run.questions),
  );
  const controls = scoreLocomo(
    conversations,
    runs.map((run) => run.controls),
  );
  const total = questions.all.questions;
  const answered = runs.reduce(
    (sum, run) => sum + run.questions.filter((returned) => returned.length > 0).length,
    0,
  );
  const turns = conversations.reduce((sum, conversation) => sum + conversation.turns.length, 0);
  const markdown = [
    `LoCoMo retrieval through agents@0.32.0's \`Sessions\` on a Durable Object (workerd): ${conversations.length} conversation(s), ${turns} turns, ${total} questions${smoke ? " (smoke)" : ""}; scored as the LoCoMo table above (hit@10 = any evidence turn among the first 10 results). ${seconds.toFixed(1)} s.`,
    "",
    locomoTable([
      ["agents@0.32.0 `session.search(question, { limit: 10 })` (agents/sessions)", questions],
      [`control: ${controlWords} consecutive words of the first evidence turn, same search`, controls],
    ]),
    "",
    `agents@0.32.0's search returned anything for ${answered} of ${total} questions. Why: its \`search\` puts the whole query in double quotes (\`MATCH '"<query>"'\`), so FTS5 matches it as one phrase, and a turn is found only when it holds every word of the question consecutively and in order; given ${controlWords} consecutive words of a turn (the control row), it finds that turn, so appends and search work in this harness.`,
    "",
    "hit@10 per conversation (questions in brackets):",
    "",
    markdownTable(
      [
        "query",
        ...conversations.map((conversation) => `${conversation.name} (${conversation.questions.length})`),
      ],
      [
        ["question", ...conversations.map((c) => shareOf(questions.byConversation.get(c.name), "hits"))],
        ["control", ...conversations.map((c) => shareOf(controls.byConversation.get(c.name), "hits"))],
      ],
    ),
  ].join("\n");
  return { markdown, questions, controls };
}

const isMain = process.argv[1]?.replaceAll("\\", "/").endsWith("src/agents-sessions-locomo.ts") === true;

if (isMain) {
  runAgentsSessionsLocomo(process.argv.includes("--smoke")).then(
    (result) =>
      console.log(
        result?.markdown ??
          "agents@0.32.0 on LoCoMo: skipped, the LoCoMo data (../shared/bench-data/locomo-dev or LOCOMO_DIRECTORY) is not on this machine.",
      ),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
