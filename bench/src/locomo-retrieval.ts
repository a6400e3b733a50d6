/**
 * Retrieval on real conversations: LoCoMo (Maharana et al., 2024), the conversations in
 * `<repo>/../shared/bench-data/locomo-dev/` (not part of the repository; the bench skips with a notice when
 * the folder is missing). The measure (bench-data/README.md): per conversation a fresh index, every turn one
 * entry (key = its `dia_id`, content = `"<speaker>: <text>"`), every question with evidence one search; a hit
 * is any evidence `dia_id` among the first 10 results. Reported: hit@10 and MRR@10 overall, per category and
 * per conversation, for @contextblocks/fts5 and agents/context's AgentSearchProvider, both on better-sqlite3.
 *
 *   pnpm --filter @contextblocks/fts5 build
 *   cd bench && node --import tsx src/locomo-retrieval.ts            # every conversation, every question
 *   cd bench && node --import tsx src/locomo-retrieval.ts --smoke    # one conversation, 30 questions
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { searchExcerpts } from "@contextblocks/ai";
import { estimateTokens } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { SessionBuilder, SessionManager } from "@contextblocks/sessions";
import { formatSearchResults } from "@contextblocks/sessions/store-kit";
import { sqliteBackend } from "@contextblocks/sqlite";
import { AgentSearchProvider } from "agents/context";
import { Session as AnchorSession } from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "./agents-sql.js";
import { locomoSessionTime } from "./locomo-time.js";
import { markdownTable } from "./markdown.js";

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  /** When its session took place (LoCoMo's `session_N_date_time`, "1:56 pm on 8 May, 2023"). */
  time?: Date | undefined;
}
interface Question {
  question: string;
  evidence?: string[];
  category: number;
}
interface Conversation {
  name: string;
  turns: Turn[];
  questions: Question[];
}
interface Searcher {
  set(key: string, content: string, time?: Date): Promise<void>;
  search(query: string): Promise<string | null>;
}

/**
 * A session as a searcher: every turn one message appended in order (id = its `dia_id`, text =
 * `"<speaker>: <text>"`, roles alternating, `createdAt` = its session's date and time, as a chat app stamps a
 * message), `search(question, { limit: 10 })`, the ids as `[id]` lines.
 */
function sessionSearcher(session: {
  appendMessage(message: {
    id: string;
    role: string;
    parts: { type: "text"; text: string }[];
    createdAt?: Date;
  }): Promise<unknown>;
  search(query: string, options: { limit: number }): Promise<{ id: string }[]>;
}): Searcher {
  let turns = 0;
  return {
    async set(key, content, time) {
      await session.appendMessage({
        id: key,
        role: turns++ % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: content }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    },
    async search(query) {
      const hits = await session.search(query, { limit: 10 });
      return hits.map((hit) => `[${hit.id}]`).join("\n");
    },
  };
}

/** Tokens of each `session_search` result, the tool's excerpts and the ten hits it returned before. */
const toolTokens = { excerpts: [] as number[], tenHits: [] as number[] };

/**
 * The model's tool path: a `SessionManager` on SQLite, one session per conversation, searched as the
 * `session_search` tool searches (`searchExcerpts`: hits with the turns around them, at most 300 tokens). A
 * question is answered when an evidence turn is shown, as a hit or beside one.
 */
function toolSearcher(): Searcher {
  const manager = new SessionManager(sqliteBackend(new Database(":memory:")));
  const session = manager.create("locomo");
  let turns = 0;
  return {
    async set(key, content, time) {
      await manager.getSession((await session).id).appendMessage({
        id: key,
        role: turns++ % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: content }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    },
    async search(query) {
      const result = await searchExcerpts(manager, query);
      toolTokens.excerpts.push(estimateTokens(result.text ?? ""));
      toolTokens.tenHits.push(
        estimateTokens(formatSearchResults(await manager.search(query, { limit: 10 })) ?? ""),
      );
      return result.turns.map((turn) => `[${turn.id}]`).join("\n");
    },
  };
}

/** An entries provider as a searcher: every turn one entry (key, content); turn times are not entries'. */
function entries(provider: {
  set(key: string, content: string): Promise<void>;
  search(query: string): Promise<string | null>;
}): Searcher {
  return { set: (key, content) => provider.set(key, content), search: (query) => provider.search(query) };
}

const smoke = process.argv.includes("--smoke");
/** The LoCoMo dev split: `LOCOMO_DIRECTORY`, else `<repo>/../shared/bench-data/locomo-dev`. */
const dataDirectory =
  process.env.LOCOMO_DIRECTORY === undefined
    ? new URL("../../../shared/bench-data/locomo-dev/", import.meta.url)
    : new URL(`file://${process.env.LOCOMO_DIRECTORY.replace(/\/?$/, "/")}`);
const smokeQuestions = 30;

/** LoCoMo's question categories (the paper's names). */
const categoryNames: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
  5: "adversarial",
};

function readConversations(): Conversation[] {
  const files = readdirSync(dataDirectory)
    .filter((file) => file.endsWith(".json"))
    .sort();
  return (smoke ? files.slice(0, 1) : files).map((file) => {
    const data = JSON.parse(readFileSync(new URL(file, dataDirectory), "utf8")) as Record<string, unknown>;
    const turns: Turn[] = [];
    for (let session = 1; Array.isArray(data[`session_${session}`]); session++) {
      const time = locomoSessionTime(data[`session_${session}_date_time`]);
      for (const turn of data[`session_${session}`] as Turn[]) turns.push({ ...turn, time });
    }
    const questions = (data.qa as Question[]).filter(
      (question) => Array.isArray(question.evidence) && question.evidence.length > 0,
    );
    return {
      name: file.replace(/\.json$/, ""),
      turns,
      questions: smoke ? questions.slice(0, smokeQuestions) : questions,
    };
  });
}

/** The keys of a search result (`[key]` lines), in order. */
function resultKeys(result: string | null, keys: ReadonlySet<string>): string[] {
  if (result === null) return [];
  const found: string[] = [];
  for (const line of result.split("\n")) {
    const match = /^\[([^\]\n]*)\]/.exec(line);
    if (match?.[1] !== undefined && keys.has(match[1]) && !found.includes(match[1])) found.push(match[1]);
  }
  return found;
}

interface Tally {
  questions: number;
  hits: number;
  reciprocalRank: number;
}
const emptyTally = (): Tally => ({ questions: 0, hits: 0, reciprocalRank: 0 });

interface Figures {
  all: Tally;
  byCategory: Map<number, Tally>;
  byConversation: Map<string, Tally>;
}

async function evaluate(make: () => Searcher, conversations: readonly Conversation[]): Promise<Figures> {
  const figures: Figures = { all: emptyTally(), byCategory: new Map(), byConversation: new Map() };
  for (const conversation of conversations) {
    const provider = make();
    for (const turn of conversation.turns)
      await provider.set(turn.dia_id, `${turn.speaker}: ${turn.text}`, turn.time);
    const keys = new Set(conversation.turns.map((turn) => turn.dia_id));
    const perConversation = emptyTally();
    figures.byConversation.set(conversation.name, perConversation);
    for (const question of conversation.questions) {
      // The tool's result is one budget, not ten hits: every turn it shows counts.
      const found = resultKeys(await provider.search(question.question), keys).slice(
        0,
        make === toolSearcher ? undefined : 10,
      );
      const evidence = new Set(question.evidence);
      const position = found.findIndex((key) => evidence.has(key));
      let perCategory = figures.byCategory.get(question.category);
      if (perCategory === undefined) {
        perCategory = emptyTally();
        figures.byCategory.set(question.category, perCategory);
      }
      for (const tally of [figures.all, perCategory, perConversation]) {
        tally.questions++;
        if (position >= 0) {
          tally.hits++;
          tally.reciprocalRank += 1 / (position + 1);
        }
      }
    }
  }
  return figures;
}

const share = (tally: Tally | undefined, of: "hits" | "reciprocalRank") =>
  tally === undefined || tally.questions === 0 ? "n/a" : (tally[of] / tally.questions).toFixed(3);

async function main(): Promise<void> {
  if (!existsSync(dataDirectory)) {
    console.log("LoCoMo retrieval: skipped, ../shared/bench-data/locomo-dev is not present on this machine.");
    return;
  }
  const conversations = readConversations();
  const systems: [string, () => Searcher][] = [
    [
      "session.search (@contextblocks/sqlite)",
      () =>
        sessionSearcher(
          new SessionBuilder(sqliteBackend(new Database(":memory:"))).forSession("locomo").build(),
        ),
    ],
    ["session_search tool (@contextblocks/ai: hits and the turns around them, ≤ 300 tokens)", toolSearcher],
    [
      "session.search (agents@0.22.0 experimental/memory/session)",
      () =>
        sessionSearcher(
          AnchorSession.create(betterSqlite3Host(new Database(":memory:")) as never).forSession(
            "locomo",
          ) as never,
        ),
    ],
    [
      "@contextblocks/fts5 (entries)",
      () => entries(new Fts5SearchProvider(new Database(":memory:"), { label: "turns" })),
    ],
    [
      "agents/context (entries)",
      () => {
        const provider = new AgentSearchProvider(betterSqlite3Host(new Database(":memory:")));
        provider.init("turns");
        return entries(provider);
      },
    ],
  ];
  const results: [string, Figures][] = [];
  for (const [name, make] of systems) results.push([name, await evaluate(make, conversations)]);
  const total = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  const turns = conversations.reduce((sum, conversation) => sum + conversation.turns.length, 0);
  console.log(
    `LoCoMo retrieval: ${conversations.length} conversation(s), ${turns} turns, ${total} questions` +
      `${smoke ? " (smoke)" : ""}; hit@10 = any evidence turn among the first 10 results.\n`,
  );
  const categories = [...new Set(results.flatMap(([, figures]) => [...figures.byCategory.keys()]))].sort();
  console.log(
    markdownTable(
      [
        "provider",
        "hit@10",
        "MRR@10",
        ...categories.map((category) => `${categoryNames[category] ?? category} (${category})`),
      ],
      results.map(([name, figures]) => [
        name,
        share(figures.all, "hits"),
        share(figures.all, "reciprocalRank"),
        ...categories.map((category) => share(figures.byCategory.get(category), "hits")),
      ]),
    ),
  );
  const mean = (values: number[]) =>
    values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
  if (toolTokens.excerpts.length > 0) {
    console.log(
      `\nsession_search result tokens per call (estimateTokens), mean: ${mean(toolTokens.excerpts).toFixed(0)} with the turns around each hit (max ${Math.max(...toolTokens.excerpts)}), ${mean(toolTokens.tenHits).toFixed(0)} for the ten hits alone (the tool's result before).`,
    );
  }
  console.log("\nhit@10 per conversation (questions in brackets):\n");
  console.log(
    markdownTable(
      [
        "provider",
        ...conversations.map((conversation) => `${conversation.name} (${conversation.questions.length})`),
      ],
      results.map(([name, figures]) => [
        name,
        ...conversations.map((conversation) => share(figures.byConversation.get(conversation.name), "hits")),
      ]),
    ),
  );
}

await main();
