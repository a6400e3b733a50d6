/**
 * Runs every benchmark and writes bench/RESULTS.md: figures and ratios, contextblocks against
 * `agents/context`, with the machine and the date.
 *
 *   pnpm bench                       # from the repository root: everything, writes bench/RESULTS.md
 *   pnpm --filter @contextblocks/bench smoke   # a tiny run of each (seconds), writes bench/out/RESULTS.smoke.md
 *   node --import tsx src/run-all.ts --only=latency,prefix-cache
 *
 * The smoke run is what CI runs (`test`), so no benchmark can rot; it never touches RESULTS.md.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  behindInDurableBlocks,
  behindInRetrieval,
  behindInSearchScale,
  behindInTokens,
  behindSummary,
  type TokenRow,
} from "./behind.js";
import * as costModel from "./cost-model.js";
import * as latency from "./latency.js";
import * as latencyBreakdown from "./latency-breakdown.js";
import { describeMachine } from "./machine.js";
import * as prefixCache from "./prefix-cache.js";
import * as rowCost from "./row-cost.js";
import * as toolResultCurve from "./tool-result-curve.js";

const BENCH_DIRECTORY = fileURLToPath(new URL("..", import.meta.url));

interface Section {
  /** For `--only`. */
  id: string;
  title: string;
  /** What it measures, one paragraph. */
  about: string;
  run(smoke: boolean): Promise<string>;
  /**
   * Run only when named in `--only` (or in a smoke run): a study too long for every full run. A full run
   * lists it with the command that runs it.
   */
  onRequest?: boolean;
}

/** Whether a benchmark file another part of the project owns is present. */
function hasScript(file: string): boolean {
  return existsSync(fileURLToPath(new URL(file, import.meta.url)));
}

/**
 * Runs a benchmark file another part of the project owns as a child process and returns what it printed,
 * made to fit in a section: markdown headings moved two levels down, plain-text tables fenced.
 */
function runScript(file: string, smoke: boolean): { output: string; markdown: string } {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const child = spawnSync(process.execPath, ["--import", "tsx", path, ...(smoke ? ["--smoke"] : [])], {
    cwd: BENCH_DIRECTORY,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: (smoke ? 3 : 90) * 60_000,
    killSignal: "SIGKILL",
  });
  if (child.error !== undefined)
    throw new Error(`${file}: ${child.error.message}\n${child.stdout}\n${child.stderr}`);
  if (child.status !== 0) {
    throw new Error(
      `${file} failed (exit ${child.status ?? child.signal}):\n${child.stdout}\n${child.stderr}`,
    );
  }
  // wrangler's local dev prints warnings (no network for `Request.cf`) on stdout: not part of the figures.
  const output = child.stdout
    .split("\n")
    .filter((line) => !/^\[wrangler:|^Error: getaddrinfo|^ {4}at /.test(line))
    .join("\n")
    .trim();
  const markdown = /^\|/m.test(output)
    ? output.replace(/^(#{1,4}) /gm, "$1## ")
    : `\`\`\`text\n${output}\n\`\`\``;
  return { output, markdown };
}

/** Results later sections reuse (the cost model prices the prefix-cache session with the row costs). */
const shared: { prefixCache?: prefixCache.PrefixCacheResult; rowCost?: rowCost.RowCostResult } = {};

function sections(): Section[] {
  const list: Section[] = [
    {
      id: "prefix-cache",
      title: "Prefix-cache share over a realistic session",
      about:
        "A scripted conversation through real `generateText` calls (memory writes and knowledge searches through " +
        "the tools, an environment block that changes once, a compaction halfway with a refresh). Each request " +
        "the model receives (tools, system, messages) is tokenized; the cached tokens are its longest common " +
        "prefix with the previous request, from 1,024 tokens on, as OpenAI and Anthropic cache.",
      run: async (smoke) => {
        const result = await prefixCache.run({ smoke });
        shared.prefixCache = result;
        mkdirSync(new URL("../out/", import.meta.url), { recursive: true });
        writeFileSync(
          new URL("../out/prefix-cache-requests.csv", import.meta.url),
          prefixCache.requestsCsv(result),
        );
        return result.markdown;
      },
    },
    {
      id: "row-cost",
      title: "Row cost on a Durable Object (workerd)",
      about:
        "Rows read and written per operation on a Durable Object's SQLite storage, in workerd through " +
        "vitest-pool-workers: `@contextblocks/sqlite` and `@contextblocks/fts5` against `agents/context`'s " +
        "`AgentContextProvider` and `AgentSearchProvider`, each system in its own object, same data.",
      run: async (smoke) => {
        const measured = await rowCost.run({ smoke });
        shared.rowCost = measured;
        const parts = [measured.markdown];
        if (hasScript("./row-cost-sqlite.ts")) {
          parts.push(
            "",
            "### Durable blocks through `createDurableContext`, by block count",
            "",
            "From bench/src/row-cost-sqlite.ts (a Worker started with wrangler): the same counters for " +
              "`@contextblocks/sqlite`'s `createDurableContext` against `agents/context`, at several block counts.",
            "",
          );
          const durable = runScript("./row-cost-sqlite.ts", smoke);
          parts.push(
            durable.markdown,
            "",
            behindSummary(behindInDurableBlocks(durable.output), "tables above"),
          );
        }
        return parts.join("\n");
      },
    },
    {
      id: "cost",
      title: "Cost in dollars: the prefix-cache session priced per provider, and its storage",
      about:
        "The prefix-cache session's requests priced with each provider's published cache rules (prices, sources " +
        "and dates in bench/README.md), per 1,000 turns: contextblocks with its default cache hints, without " +
        "them, re-rendering every turn and agents/context; then the Durable Object rows the session costs.",
      run: async (smoke) =>
        (
          await costModel.run({
            smoke,
            ...(shared.prefixCache ? { prefixCache: shared.prefixCache } : {}),
            ...(shared.rowCost ? { rowCosts: shared.rowCost.rows } : {}),
          })
        ).markdown,
    },
    {
      id: "tool-result-curve",
      title: "Tool-result cost against recall: the knowledge search's settings",
      about:
        "The prefix-cache session's input cost (contextblocks ÷ agents/context) and LoCoMo hit@10 through the " +
        "search tool's path, for several result counts, excerpt lengths and weak-match settings (key only, or " +
        "left out, below a share of the best bm25) of the knowledge block's search provider.",
      run: async (smoke) => (await toolResultCurve.run({ smoke })).markdown,
    },
    {
      id: "latency",
      title: "Latency on better-sqlite3",
      about:
        "Time per operation on better-sqlite3: rendering and freezing with 10 and 200 stored blocks, and the " +
        "search provider's `set`, `get` and `search` at 1k, 10k and 100k entries.",
      run: async (smoke) => {
        const parts = [
          "### Blocks: render and freeze",
          "",
          (await latency.run({ smoke })).markdown,
          "",
          "### Blocks: what each step costs",
          "",
          (await latencyBreakdown.run({ smoke })).markdown,
        ];
        if (hasScript("./fts5-scale.ts")) {
          parts.push(
            "",
            "### Search provider: `set`, `get`, `search` by index size",
            "",
            "From bench/src/fts5-scale.ts (better-sqlite3 on a WAL file; its own synthetic corpus and queries). " +
              "`agents/ours` above 1 means contextblocks is faster.",
            "",
          );
          const scale = runScript("./fts5-scale.ts", smoke);
          parts.push(
            scale.markdown,
            "",
            behindSummary(behindInSearchScale(scale.output), "search-provider table"),
          );
        }
        return parts.join("\n");
      },
    },
  ];
  if (hasScript("./fts5-retrieval.ts")) {
    list.push({
      id: "fts5-retrieval",
      title: "Search retrieval quality",
      about:
        "How often the entry that answers a question comes back first, in the top 3 and in the top 10, for " +
        "`@contextblocks/fts5` against `agents/context`'s `AgentSearchProvider` on the same corpus " +
        "(bench/src/fts5-retrieval.ts, data in bench/data/fts5/).",
      run: async (smoke) => {
        const retrieval = runScript("./fts5-retrieval.ts", smoke);
        return `${retrieval.markdown}\n\n${behindSummary(behindInRetrieval(retrieval.output), "retrieval table")}`;
      },
    });
  }
  if (hasScript("./search-speed.ts")) {
    list.push({
      id: "search-speed",
      title: "Search speed against the floor: a plain table, one statement",
      about:
        "`Fts5SearchProvider.search` against a plain two-column FTS5 table (`key`, `content`, `porter unicode61`) " +
        "holding the same entries after the same writes, queried with one statement (the query's content words " +
        "ORed, `ORDER BY rank LIMIT 10`); `PostgresSearchProvider.search` against one query on a plain " +
        "`tsvector` + GIN table of the same texts (`ts_rank`, top 10; both tables vacuumed and analysed after the " +
        "load, as autovacuum leaves them). Paired in one process, at 20k and 100k " +
        "entries, on a Zipf-like corpus and on random tokens (5,000 words w0…w4999, 30 words an entry), three- " +
        "and five-word queries; goal: at most 1.5× on SQLite and 2× on Postgres (bench/src/search-speed.ts, " +
        "the floors in bench/src/search-floor.ts).",
      run: async (smoke) => runScript("./search-speed.ts", smoke).markdown,
    });
  }
  if (hasScript("./locomo-retrieval.ts")) {
    list.push({
      id: "locomo-retrieval",
      title: "Retrieval on real conversations (LoCoMo)",
      about:
        "hit@10, MRR@10 and per-category hit@10 on the LoCoMo conversations in ../shared/bench-data/locomo-dev " +
        "(every turn one entry, every question one search), `@contextblocks/fts5` against `agents/context` " +
        "(bench/src/locomo-retrieval.ts; skipped when the data is absent).",
      run: async (smoke) => runScript("./locomo-retrieval.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-search-selection.ts")) {
    list.push({
      id: "session-search-selection",
      title: "Session search on LoCoMo: precision beside recall, settings by leave-one-conversation-out",
      about:
        "Every turn one message, every question `session.search` of 10 hits, on memory, SQLite (lean and keyed) " +
        "and Postgres, with and without message times: hit@10, the share of hits holding a query term and " +
        "result tokens per call, the ranking's settings chosen on the other conversations under the stores' " +
        "own hit selection (fold mean ± spread) (bench/src/session-search-selection.ts; skipped when the data " +
        "is absent).",
      run: async (smoke) => runScript("./session-search-selection.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-search-headroom.ts")) {
    list.push({
      id: "session-search-headroom",
      title: "Session search on LoCoMo: where recall is lost, and what re-ranking the candidates recovers",
      about:
        "Each store with its default ranking, 100 candidates per question, with and without message times, on " +
        "SQLite and Postgres: the share of questions with an evidence turn among the first k candidates beside " +
        "hit@10 after the hit selection, and three re-rankings of the first 30 candidates (feedback words, query " +
        "coverage, day spread) with their weight chosen by leave-one-conversation-out " +
        "(bench/src/session-search-headroom.ts; skipped when the data is absent).",
      run: async (smoke) => runScript("./session-search-headroom.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-search-learned-rerank.ts")) {
    list.push({
      id: "session-search-learned-rerank",
      // A negative result that takes about 35 minutes per backend: kept, not repeated on every full run.
      onRequest: true,
      title: "Session search on LoCoMo: a learned re-ranker of the candidates",
      about:
        "Each store with its default ranking, with and without message times, on SQLite and Postgres: a linear " +
        "score over features of the candidates (length, rarest query term held, every term held, the scores and " +
        "coverage of the turns around, neighbour match, store rank) beside the shipped re-ranking's weights, " +
        "fitted by coordinate ascent on the other conversations (fold mean ± spread of hit@10, precision, " +
        "tokens) (bench/src/session-search-learned-rerank.ts; skipped when the data is absent).",
      run: async (smoke) => runScript("./session-search-learned-rerank.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-search-second-query.ts")) {
    list.push({
      id: "session-search-second-query",
      // A negative result (about 4 minutes with Postgres): kept, not repeated on every full run.
      onRequest: true,
      title: "Session search on LoCoMo: a second search with the words its first candidates share",
      about:
        "Each store with its default ranking, with and without message times, on SQLite and Postgres: the " +
        "question searched, then the question and the words its best candidates share (query expansion by " +
        "pseudo-relevance feedback), the two lists merged; reach, hit@10, precision and tokens beside the first " +
        "search's, and the time of each search (bench/src/session-search-second-query.ts; skipped when the data " +
        "is absent).",
      run: async (smoke) => runScript("./session-search-second-query.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-search-scale.ts")) {
    list.push({
      id: "session-search-scale",
      title: "Session search as a conversation grows: LoCoMo in one session against a bare statement",
      about:
        "Every LoCoMo conversation we have, repeated, in one session (about 5,900 and 23,500 messages), on SQLite " +
        "and on Postgres: median and p95 of `session.search` beside one bare statement of the question's content " +
        "words over a plain table of the same texts (FTS5; `tsvector` + GIN with `ts_rank`), and the first search " +
        "after the appends " +
        "(bench/src/session-search-scale.ts; skipped when the data is absent).",
      run: async (smoke) => (await import("./session-search-scale.js")).run(smoke),
    });
  }
  if (hasScript("./agents-sessions-locomo.ts")) {
    list.push({
      id: "agents-sessions-locomo",
      title: "Retrieval on real conversations (LoCoMo): agents@0.32.0's Sessions",
      about:
        "The same LoCoMo measure for agents@0.32.0's `session.search` (`agents/sessions`), which runs only on a " +
        "Durable Object: each conversation appended to one session in workerd, each question searched with " +
        "limit 10, plus a control query of words from the evidence turn (bench/src/agents-sessions-locomo.ts; " +
        "skipped when the data is absent).",
      run: async (smoke) => runScript("./agents-sessions-locomo.ts", smoke).markdown,
    });
  }
  if (hasScript("./sessions.ts")) {
    list.push({
      id: "sessions",
      title: "Sessions: message tree, wake memory, search",
      about:
        "`@contextblocks/sessions` against `agents/experimental/memory/session` (agents@0.22.0) and `agents/sessions` " +
        "(agents@0.32.0, timing only) on better-sqlite3: `appendMessage` and `getHistory` by session length, heap on a " +
        "bounded wake, LoCoMo hit@10 (bench/src/sessions.ts).",
      run: async (smoke) => runScript("./sessions.ts", smoke).markdown,
    });
  }
  if (hasScript("./postgres.ts")) {
    list.push({
      id: "postgres",
      title: "Postgres beside SQLite",
      about:
        "The same operations on SQLite and on a throwaway local PostgreSQL (latency, statements or round trips), " +
        "and LoCoMo dev retrieval with `PostgresSearchProvider` beside fts5 (bench/src/postgres.ts).",
      run: async (smoke) => runScript("./postgres.ts", smoke).markdown,
    });
  }
  if (hasScript("./sessions-row-cost.ts")) {
    list.push({
      id: "sessions-row-cost",
      title: "Sessions on a Durable Object: rows per operation",
      about:
        "Rows read / written per `appendMessage` (also with a change-feed listener), `getHistory`, `history()`, `historyBatches()`, " +
        "`compactAfter`'s token estimate in a new Session, `getLatestLeaf`, `searchMessages`, `addCompaction` " +
        "at 100, 1,000 and 10,000 messages, `@contextblocks/sessions` (a new database: the keyed layout; and a lean one, asked for) against agents@0.22.0 " +
        "and agents@0.32.0 (bench/src/sessions-row-cost.ts).",
      run: async (smoke) => runScript("./sessions-row-cost.ts", smoke).markdown,
    });
  }
  if (hasScript("./session-growth.ts")) {
    list.push({
      id: "session-growth",
      title: "First search after many appends",
      about:
        "The first session search after 5,000 and 25,000 appended LoCoMo turns against the same search warm, on each " +
        "layout of `SqliteSessionStore` over better-sqlite3 (bench/src/session-growth.ts).",
      run: async (smoke) => runScript("./session-growth.ts", smoke).markdown,
    });
  }
  if (hasScript("./tokens.ts")) {
    list.push({
      id: "tokens",
      title: "Token estimation",
      about:
        "The default token estimator against gpt-tokenizer (o200k and cl100k) on English prose, code, JSON " +
        "and Chinese text: mean and worst signed error (bench/src/tokens.ts, samples in bench/data/token-samples/).",
      run: async (smoke) => {
        const tokens = (await import("./tokens.js")) as {
          run(options: { smoke?: boolean }): Promise<{ markdown: string; rows?: TokenRow[] }>;
        };
        const result = await tokens.run({ smoke });
        return `${result.markdown}\n\n${behindSummary(behindInTokens(result.rows ?? []), "token table (o200k)")}`;
      },
    });
  }
  if (hasScript("./package-sizes.ts")) {
    list.push({
      id: "package-sizes",
      title: "Package and bundle sizes",
      about:
        "Tarball sizes and Worker bundle sizes (core + sqlite, + fts5) from `pnpm pack-check` (tests/pack).",
      run: async () => (await import("./package-sizes.js")).run(),
    });
  }
  list.push({
    id: "bundle-size",
    title: "What contextblocks adds to a Worker",
    about:
      "Three tiny Workers (blocks; + sessions; + an AI SDK turn) bundled with `wrangler deploy --dry-run --minify`, " +
      "each beside the same job with agents@0.32.0 (`agents/context`, `agents/sessions`), `ai` and `zod` subtracted " +
      "through a baseline Worker; the minified bytes of (c) by package from esbuild's metafile.",
    run: (smoke) => import("./bundle-size.js").then((section) => section.run({ smoke })),
  });
  if (hasScript("./skills-row-cost.ts")) {
    list.push({
      id: "skills-row-cost",
      title: "Skills in storage: cost per operation",
      about:
        "`SqliteSkillProvider` on a Durable Object (rows read / written) and `R2SkillProvider` on an R2 bucket " +
        "(bucket calls) per `get`, `load`, `set` and `delete`, at 10 and 1,000 skills (bench/src/skills-row-cost.ts).",
      run: async (smoke) => runScript("./skills-row-cost.ts", smoke).markdown,
    });
  }
  if (hasScript("./block-history-cost.ts")) {
    list.push({
      id: "block-history-cost",
      title: "Block history: cost of a write",
      about:
        "`SqliteContextProvider` with history (the default, last 50 versions) and without (`versions: false`): " +
        "rows read and written per write on a Durable Object, and time per write on better-sqlite3 " +
        "(bench/src/block-history-cost.ts).",
      run: async (smoke) => runScript("./block-history-cost.ts", smoke).markdown,
    });
  }
  if (hasScript("./tracing-overhead.ts")) {
    list.push({
      id: "tracing-overhead",
      title: "Tracing overhead",
      about:
        "Time per memory turn with no tracer, with `@contextblocks/otel` and no OpenTelemetry tracer provider " +
        "registered, and with a recording provider (bench/src/tracing-overhead.ts).",
      run: async (smoke) =>
        (await import("./tracing-overhead.js")).run({ smoke }).then((result) => result.markdown),
    });
  }
  if (hasScript("./faults.ts")) {
    list.push({
      id: "faults",
      title: "Faults and load: writers killed, servers restarted, objects reset",
      about:
        "The fault and soak harness (tests/faults): a Node writer on a better-sqlite3 file database killed with " +
        "SIGKILL at a random moment, hundreds of times (batches of appends in two layouts and journal modes, and " +
        "pipeline turns with a tool call); a throwaway Postgres restarted with `pg_ctl restart -m immediate` while " +
        "sessions append and take turns; writers on many sessions of one Durable Object reset with `ctx.abort()` " +
        "mid-write (workerd); examples/worker-agent under `wrangler dev` killed mid-turn and started again; an " +
        "inspector subscriber that never reads while a session takes 1 MiB appends. Each session is checked " +
        "after each fault (bench/src/faults.ts).",
      run: async (smoke) => runScript("./faults.ts", smoke).markdown,
    });
  }
  return list;
}

/**
 * Formats the written file with the repository's Biome settings (tables padded). The repository's
 * biome.json leaves markdown out and bench/out/ is git-ignored, so Biome would process nothing in place:
 * it formats a copy in a scratch directory that holds only the formatter settings, then writes it back.
 */
function formatMarkdown(path: string): void {
  let biome: string;
  try {
    biome = join(
      dirname(createRequire(import.meta.url).resolve("@biomejs/biome/package.json")),
      "bin",
      "biome",
    );
  } catch {
    process.stderr.write("bench: @biomejs/biome not found; RESULTS.md left unformatted\n");
    return;
  }
  const repositoryConfig = JSON.parse(readFileSync(join(BENCH_DIRECTORY, "..", "biome.json"), "utf8")) as {
    formatter?: unknown;
  };
  const scratch = mkdtempSync(join(tmpdir(), "bench-format-"));
  try {
    writeFileSync(join(scratch, "biome.json"), JSON.stringify({ formatter: repositoryConfig.formatter }));
    writeFileSync(join(scratch, "RESULTS.md"), readFileSync(path, "utf8"));
    const child = spawnSync(process.execPath, [biome, "format", "--write", "RESULTS.md"], {
      cwd: scratch,
      encoding: "utf8",
    });
    if (child.status !== 0) {
      process.stderr.write(`bench: biome format failed:\n${child.stdout}${child.stderr}\n`);
      return;
    }
    writeFileSync(path, readFileSync(join(scratch, "RESULTS.md"), "utf8"));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const smoke = process.argv.includes("--smoke");
  const only = process.argv
    .find((argument) => argument.startsWith("--only="))
    ?.slice("--only=".length)
    .split(",");
  const selected = sections().filter((section) => only === undefined || only.includes(section.id));
  const started = new Date();
  const parts: string[] = [
    `# contextblocks benchmarks${smoke ? " (smoke run: tiny sizes, not figures to quote)" : ""}`,
    "",
    "Generated by `pnpm bench` (bench/src/run-all.ts); do not edit by hand. Each benchmark runs contextblocks " +
      "and `agents/context` (npm `agents` 0.32.0) on the same data in the same run. The machine is shared and " +
      "noisy: read medians and ratios, not single absolute times. What each benchmark measures and how to read " +
      "the ratios: bench/README.md.",
    "",
    describeMachine(started),
    "",
  ];
  const failures: string[] = [];
  for (const section of selected) {
    const clock = performance.now();
    process.stderr.write(`bench: ${section.title}…\n`);
    parts.push(`## ${section.title}`, "", section.about, "");
    if (section.onRequest === true && !smoke && only === undefined) {
      parts.push(
        `Not part of the full run (it takes about an hour): \`node --import tsx src/run-all.ts --only=${section.id}\`.`,
        "",
      );
      continue;
    }
    try {
      parts.push(await section.run(smoke), "");
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push(`${section.id}: ${message}`);
      parts.push(`**This benchmark failed in this run:**`, "", "```", message.slice(0, 4_000), "```", "");
    }
    process.stderr.write(`bench: ${section.title}: ${((performance.now() - clock) / 1000).toFixed(1)} s\n`);
  }
  // Only a full run of everything replaces RESULTS.md.
  const target = smoke
    ? new URL("../out/RESULTS.smoke.md", import.meta.url)
    : only !== undefined
      ? new URL("../out/RESULTS.partial.md", import.meta.url)
      : new URL("../RESULTS.md", import.meta.url);
  mkdirSync(new URL("../out/", import.meta.url), { recursive: true });
  writeFileSync(target, `${parts.join("\n").trimEnd()}\n`);
  formatMarkdown(fileURLToPath(target));
  process.stderr.write(`bench: wrote ${fileURLToPath(target)}\n`);
  if (failures.length > 0) {
    process.stderr.write(`bench: ${failures.length} benchmark(s) failed:\n${failures.join("\n\n")}\n`);
    process.exitCode = 1;
  }
}

await main();
