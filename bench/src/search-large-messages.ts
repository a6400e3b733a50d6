/**
 * Search over pasted files: a session of 30 messages, each the same words repeated to 2 kB (a long chat turn) or
 * to 2 MB (a pasted log, as large as a Durable Object row holds), on better-sqlite3. Each searched with
 * `manager.search(query, { limit: 10 })` and with `searchExcerpts` (what `session_search` answers), the medians
 * side by side and the ratio of the large messages to the small: the work a search does in proportion to its
 * hits' size (SQLite's search rows hold the first 256 kB of a message; the re-ranking reads a candidate's first
 * 32 kB, an excerpt is cut from a turn's first 64 kB, a context turn is cut without being counted whole).
 *
 *   cd bench && node --import tsx src/search-large-messages.ts [--smoke]
 */
import { performance } from "node:perf_hooks";
import { searchExcerpts } from "@contextblocks/ai";
import { SessionManager } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import Database from "better-sqlite3";
import { markdownTable } from "./markdown.js";

const messages = 30;
const query = "harbour tide signal";
const words = "harbour tide engine lantern orchard meadow river signal copper violet".split(" ");

/** A text of about `size` characters: lines of the words above, each line numbered. */
function textOf(size: number, seed: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let line = 0; length < size; line++) {
    const text = `${words[(line * 7 + seed) % words.length]} ${words[(line + seed) % words.length]} line ${line}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Medians of a search and of its excerpts over a session of `messages` texts of `size` characters. */
async function measure(size: number, rounds: number): Promise<{ search: number; excerpts: number }> {
  const manager = new SessionManager(sqliteBackend(new Database(":memory:")));
  const chat = await manager.create("Pasted files");
  const session = manager.getSession(chat.id);
  for (let index = 0; index < messages; index++) {
    await session.appendMessage({
      id: `m${index}`,
      role: index % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text: textOf(size, index) }],
    });
  }
  // The first search catches the index up on the appends: not timed.
  await manager.search(query, { limit: 10 });
  const searches: number[] = [];
  const excerpts: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let started = performance.now();
    await manager.search(query, { limit: 10 });
    searches.push(performance.now() - started);
    started = performance.now();
    await searchExcerpts(manager, query);
    excerpts.push(performance.now() - started);
  }
  return { search: median(searches), excerpts: median(excerpts) };
}

export async function run(smoke: boolean): Promise<string> {
  const rounds = smoke ? 2 : 15;
  const small = await measure(2_000, rounds);
  const large = await measure(smoke ? 200_000 : 2_000_000, rounds);
  const row = (label: string, of: (figures: { search: number; excerpts: number }) => number) => [
    label,
    of(small).toFixed(2),
    of(large).toFixed(2),
    `${(of(large) / (of(small) || 1)).toFixed(1)}×`,
  ];
  return [
    `${messages} messages on better-sqlite3, each its text repeated to 2 kB or to ${smoke ? "200 kB" : "2 MB"}; ` +
      `"${query}", median of ${rounds} runs, milliseconds.`,
    "",
    markdownTable(
      ["operation", "2 kB messages", `${smoke ? "200 kB" : "2 MB"} messages`, "large / small"],
      [
        row("`manager.search(query, { limit: 10 })`", (figures) => figures.search),
        row("`searchExcerpts(manager, query)` (`session_search`)", (figures) => figures.excerpts),
      ],
    ),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await run(process.argv.includes("--smoke")));
}
