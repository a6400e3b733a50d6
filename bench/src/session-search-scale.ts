/**
 * Session search as a conversation grows, on better-sqlite3: every LoCoMo conversation we have, repeated
 * (each copy its own ids), appended to ONE session (about 5,900 and 23,500 messages), then 100 of their
 * questions asked with `session.search(question, { limit: 10 })`. The floor is the simplest thing doing the
 * same job: one bare FTS5 statement over a plain table of the same texts (`key`, `content`, `porter
 * unicode61`), its MATCH the question's content words (stopwords removed) ORed, `ORDER BY rank LIMIT 10`.
 * Median and p95 of each, side by side, and the ratio; the first search after the appends apart (it catches
 * the index up on the lean layout).
 *
 *   cd bench && node --import tsx src/session-search-scale.ts [--smoke]
 */
import { performance } from "node:perf_hooks";
import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { fts5String, planQuery } from "@contextblocks/text";
import Database from "better-sqlite3";
import { locomoDirectory, readLocomo } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";

const questionsAsked = 100;

function quantile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

export async function run(smoke: boolean): Promise<string> {
  const conversations = readLocomo(false);
  if (conversations === null) return `Skipped: ${locomoDirectory.pathname} is not on this machine.`;
  const texts = conversations.flatMap((conversation) =>
    conversation.turns.map((turn) => `${turn.speaker}: ${turn.text}`),
  );
  const questions = conversations
    .flatMap((conversation) => conversation.questions.map((question) => question.question))
    .filter((_, index, all) => index % Math.max(1, Math.floor(all.length / questionsAsked)) === 0)
    .slice(0, smoke ? 10 : questionsAsked);
  const copiesList = smoke ? [1] : [2, 8];
  const rows: string[][] = [];
  for (const copies of copiesList) {
    const database = new Database(":memory:");
    const session = new SessionBuilder(sqliteBackend(database)).forSession("all").build();
    const floor = new Database(":memory:");
    floor.exec("CREATE VIRTUAL TABLE entries USING fts5(key, content, tokenize='porter unicode61')");
    const insert = floor.prepare("INSERT INTO entries (key, content) VALUES (?, ?)");
    let count = 0;
    for (let copy = 0; copy < copies; copy++) {
      for (const text of texts) {
        const id = `c${copy}-${count++}`;
        await session.appendMessage({
          id,
          role: count % 2 === 0 ? "user" : "assistant",
          parts: [{ type: "text", text }],
        });
        insert.run(id, text);
      }
    }
    const bare = floor.prepare("SELECT key FROM entries WHERE entries MATCH ? ORDER BY rank LIMIT 10");
    const started = performance.now();
    await session.search(questions[0] ?? "hello", { limit: 10 });
    const first = performance.now() - started;
    const ours: number[] = [];
    const floors: number[] = [];
    for (const question of questions) {
      const plan = planQuery(question);
      if (plan === null) continue;
      const match = plan.terms.map((term) => fts5String(term.word)).join(" OR ");
      // Paired in one process, one after the other, the order alternating.
      for (const which of ours.length % 2 === 0 ? ["ours", "floor"] : ["floor", "ours"]) {
        const start = performance.now();
        if (which === "ours") await session.search(question, { limit: 10 });
        else bare.all(match);
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
    database.close();
    floor.close();
  }
  return [
    `Every LoCoMo conversation in ${locomoDirectory.pathname} (${conversations.length}), repeated, in one session ` +
      `(lean layout, better-sqlite3); ${questions.length} of their questions, each \`session.search(question, ` +
      "{ limit: 10 })` paired with one bare FTS5 statement of its content words ORed over a plain table of the " +
      "same texts. Milliseconds.",
    "",
    markdownTable(
      [
        "messages",
        "median: session.search / bare FTS5",
        "p95: session.search / bare FTS5",
        "first search, ms",
      ],
      rows,
    ),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await run(process.argv.includes("--smoke")));
}
