/**
 * Retrieval quality of @contextblocks/fts5 against agents/context's AgentSearchProvider, side by side on the
 * same corpus, in the same run, both on better-sqlite3.
 *
 * Corpus: bench/data/fts5/corpus.jsonl, 311 entries of an agent's knowledge base (user facts, family, health,
 * recipes, a software project's notes, how-tos, travel, money, home, hobbies). Questions:
 * bench/data/fts5/questions.jsonl, 152 questions phrased as a user asks them, each with the key of the entry
 * that answers it. Figures: hit rate of that entry at 1, 3 and 10, mean reciprocal rank (top 10), and how
 * many questions returned nothing at all.
 *
 * Three runs: keys as the `set_context` tool makes them (a slug of the title, which our provider indexes and
 * agents/context does not); opaque keys (`entry-017`) so only the content can match; and opaque keys with
 * the questions cut down to keywords (English stopwords and punctuation removed), the way a model sometimes
 * phrases a search, to show that the difference is not only the stopwords.
 *
 *   pnpm --filter @contextblocks/fts5 build
 *   cd bench && node --import tsx src/fts5-retrieval.ts            # full
 *   cd bench && node --import tsx src/fts5-retrieval.ts --smoke    # 20 questions
 */
import { readFileSync } from "node:fs";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { AgentSearchProvider } from "agents/context";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "./agents-sql.js";

interface Entry {
  key: string;
  content: string;
}
interface Question {
  question: string;
  key: string;
}
interface Searcher {
  set(key: string, content: string): Promise<void>;
  search(query: string): Promise<string | null>;
}

const smoke = process.argv.includes("--smoke");
const dataDirectory = new URL("../data/fts5/", import.meta.url);

function readLines<T>(name: string): T[] {
  return readFileSync(new URL(name, dataDirectory), "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

/** The keys of a search result, in order. */
function resultKeys(result: string | null, keys: ReadonlySet<string>): string[] {
  if (result === null) return [];
  const found: string[] = [];
  for (const line of result.split("\n")) {
    const match = /^\[(.*)\]$/.exec(line);
    if (match?.[1] !== undefined && keys.has(match[1])) found.push(match[1]);
  }
  return found;
}

interface Figures {
  hitAt1: number;
  hitAt3: number;
  hitAt10: number;
  reciprocalRank: number;
  empty: number;
  misses: string[];
}

async function evaluate(
  provider: Searcher,
  entries: readonly Entry[],
  questions: readonly Question[],
): Promise<Figures> {
  for (const entry of entries) await provider.set(entry.key, entry.content);
  const keys = new Set(entries.map((entry) => entry.key));
  const figures: Figures = { hitAt1: 0, hitAt3: 0, hitAt10: 0, reciprocalRank: 0, empty: 0, misses: [] };
  for (const question of questions) {
    const found = resultKeys(await provider.search(question.question), keys).slice(0, 10);
    if (found.length === 0) figures.empty++;
    const position = found.indexOf(question.key);
    if (position === 0) figures.hitAt1++;
    if (position >= 0 && position < 3) figures.hitAt3++;
    if (position >= 0) {
      figures.hitAt10++;
      figures.reciprocalRank += 1 / (position + 1);
    } else {
      figures.misses.push(question.question);
    }
  }
  return figures;
}

/** A question cut down to its keywords: words only, common English function words left out. */
const functionWords = new Set(
  (
    "a an the and or but of to in on at for with from by about as is are was were be been am do does did " +
    "have has had i me my we our us you your he she it its they them their this that these those what which " +
    "who whom whose when where why how can could should would will shall may might must not no so if than " +
    "too very just any some there here up out into over after before get got"
  ).split(" "),
);
function keywords(question: string): string {
  return (question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => !functionWords.has(word) && word.length > 1)
    .join(" ");
}

function percent(count: number, total: number): string {
  return `${((100 * count) / total).toFixed(1)}%`;
}

function row(name: string, figures: Figures, total: number): string {
  return [
    name.padEnd(34),
    percent(figures.hitAt1, total).padStart(7),
    percent(figures.hitAt3, total).padStart(7),
    percent(figures.hitAt10, total).padStart(7),
    (figures.reciprocalRank / total).toFixed(3).padStart(7),
    String(figures.empty).padStart(7),
  ].join("  ");
}

async function main(): Promise<void> {
  const entries = readLines<Entry>("corpus.jsonl");
  const allQuestions = readLines<Question>("questions.jsonl");
  const questions = smoke ? allQuestions.slice(0, 20) : allQuestions;
  const opaque = new Map(
    entries.map((entry, index) => [entry.key, `entry-${String(index).padStart(3, "0")}`]),
  );
  const opaqueEntries = entries.map((entry) => ({
    key: opaque.get(entry.key) ?? entry.key,
    content: entry.content,
  }));
  const opaqueQuestions = questions.map((question) => ({
    question: question.question,
    key: opaque.get(question.key) ?? question.key,
  }));

  const keywordQuestions = opaqueQuestions.map((question) => ({
    question: keywords(question.question),
    key: question.key,
  }));

  const ours = () => new Fts5SearchProvider(new Database(":memory:"), { label: "knowledge" });
  const theirs = () => {
    const provider = new AgentSearchProvider(betterSqlite3Host(new Database(":memory:")));
    provider.init("knowledge");
    return provider;
  };

  console.log(
    `FTS5 retrieval: ${entries.length} entries, ${questions.length} questions${smoke ? " (smoke)" : ""}\n`,
  );
  console.log(
    ["provider".padEnd(34), "hit@1", "hit@3", "hit@10", "MRR@10", "empty"]
      .map((c) => c.padStart(7))
      .join("  "),
  );
  const results: [string, Figures][] = [
    ["@contextblocks/fts5, slug keys", await evaluate(ours(), entries, questions)],
    ["agents/context, slug keys", await evaluate(theirs(), entries, questions)],
    ["@contextblocks/fts5, opaque keys", await evaluate(ours(), opaqueEntries, opaqueQuestions)],
    ["agents/context, opaque keys", await evaluate(theirs(), opaqueEntries, opaqueQuestions)],
    ["@contextblocks/fts5, keywords", await evaluate(ours(), opaqueEntries, keywordQuestions)],
    ["agents/context, keywords", await evaluate(theirs(), opaqueEntries, keywordQuestions)],
  ];
  for (const [name, figures] of results) console.log(row(name, figures, questions.length));

  if (process.argv.includes("--misses")) {
    for (const [name, figures] of results) {
      console.log(`\nMissed by ${name} (${figures.misses.length}):`);
      for (const miss of figures.misses) console.log(`  - ${miss}`);
    }
  }
}

await main();
