/**
 * Token estimation: how close do cheap estimators come to a real tokenizer?
 *
 * Compares, on English prose, code, JSON and Chinese samples (bench/data/token-samples/, one category per
 * file-name prefix):
 * - `estimateTokens`, the default counter of @contextblocks/core;
 * - characters / 4, the rule of thumb;
 * - `estimateStringTokens` from the `agents` package (what agents/context counts with: the larger of
 *   characters / 4 and words × 1.3). It lives in an internal chunk of agents' dist, found through
 *   agents/context's own import of it; if that ever fails, a stand-in with the same formula is used and the
 *   table says so.
 * against gpt-tokenizer's o200k (gpt-4o) and cl100k (gpt-4) encodings.
 *
 * Signed error = (estimate − real) / real: negative means the estimator under-counts, which lets a write
 * pass a `maxTokens` limit it should not. "worst" is the sample error with the largest magnitude, sign kept;
 * "range" is the lowest and highest sample error.
 *
 * Run: `cd bench && node --import tsx src/tokens.ts` (add `--smoke` for one sample per category).
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { estimateTokens } from "@contextblocks/core";
import { countTokens as countCl100k } from "gpt-tokenizer/model/gpt-4";
import { countTokens as countO200k } from "gpt-tokenizer/model/gpt-4o";

export const SAMPLES_DIRECTORY = fileURLToPath(new URL("../data/token-samples/", import.meta.url));

export const CATEGORIES = ["prose", "code", "json", "chinese"] as const;
export type Category = (typeof CATEGORIES)[number];

const CATEGORY_NAMES: Record<Category, string> = {
  prose: "English prose",
  code: "Code",
  json: "JSON",
  chinese: "Chinese",
};

export interface Sample {
  name: string;
  category: Category;
  text: string;
}

export interface Estimator {
  name: string;
  count: (text: string) => number;
}

/** Signed errors over a category's samples: mean, the one of largest magnitude, and the extremes. */
export interface ErrorSummary {
  mean: number;
  worst: number;
  min: number;
  max: number;
}

export interface Row {
  category: Category;
  estimator: string;
  samples: number;
  characters: number;
  o200k: ErrorSummary;
  cl100k: ErrorSummary;
}

export interface TokenBenchResult {
  rows: Row[];
  markdown: string;
  /** How agents' estimator was obtained: imported from the package, or the documented stand-in. */
  agentsEstimator: "imported" | "stand-in";
}

/** The samples, by category (file name prefix `prose-`, `code-`, `json-`, `chinese-`), sorted by name. */
export function loadSamples(options: { smoke?: boolean } = {}): Sample[] {
  const samples: Sample[] = [];
  for (const name of readdirSync(SAMPLES_DIRECTORY).sort()) {
    const category = CATEGORIES.find((candidate) => name.startsWith(`${candidate}-`));
    if (!category) continue;
    if (options.smoke && samples.some((sample) => sample.category === category)) continue;
    samples.push({ name, category, text: readFileSync(`${SAMPLES_DIRECTORY}${name}`, "utf8") });
  }
  return samples;
}

/** agents' own estimator formula, used only when the package's function cannot be imported. */
function agentsStandIn(text: string): number {
  if (!text) return 0;
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.ceil(Math.max(text.length / 4, words * 1.3));
}

/**
 * `estimateStringTokens` from the installed `agents` package. It is not a public export: agents/context
 * imports it from a hashed chunk (`import { r as estimateStringTokens } from "../tokens-….js"`), so the
 * chunk is located through that import line.
 */
export async function loadAgentsEstimator(): Promise<{
  count: (text: string) => number;
  source: "imported" | "stand-in";
}> {
  try {
    const contextUrl = import.meta.resolve("agents/context");
    const source = readFileSync(fileURLToPath(contextUrl), "utf8");
    const match = /import\s*\{\s*(\w+)\s+as\s+estimateStringTokens\s*\}\s*from\s*"([^"]+)"/.exec(source);
    if (match?.[1] && match[2]) {
      const chunk = (await import(new URL(match[2], contextUrl).href)) as Record<string, unknown>;
      const candidate = chunk[match[1]];
      if (typeof candidate === "function" && candidate.name === "estimateStringTokens") {
        return { count: candidate as (text: string) => number, source: "imported" };
      }
    }
  } catch {
    // Fall through to the stand-in.
  }
  return { count: agentsStandIn, source: "stand-in" };
}

function signedError(estimate: number, real: number): number {
  return (estimate - real) / real;
}

function summarize(errors: readonly number[]): ErrorSummary {
  const mean = errors.reduce((sum, error) => sum + error, 0) / errors.length;
  const worst = errors.reduce((worst, error) => (Math.abs(error) > Math.abs(worst) ? error : worst), 0);
  return { mean, worst, min: Math.min(...errors), max: Math.max(...errors) };
}

export function measure(samples: readonly Sample[], estimators: readonly Estimator[]): Row[] {
  const real = new Map(
    samples.map((sample) => [sample, { o200k: countO200k(sample.text), cl100k: countCl100k(sample.text) }]),
  );
  const rows: Row[] = [];
  for (const category of CATEGORIES) {
    const inCategory = samples.filter((sample) => sample.category === category);
    if (inCategory.length === 0) continue;
    for (const estimator of estimators) {
      const o200k: number[] = [];
      const cl100k: number[] = [];
      for (const sample of inCategory) {
        const estimate = estimator.count(sample.text);
        const counts = real.get(sample);
        if (!counts) continue;
        o200k.push(signedError(estimate, counts.o200k));
        cl100k.push(signedError(estimate, counts.cl100k));
      }
      rows.push({
        category,
        estimator: estimator.name,
        samples: inCategory.length,
        characters: inCategory.reduce((sum, sample) => sum + sample.text.length, 0),
        o200k: summarize(o200k),
        cl100k: summarize(cl100k),
      });
    }
  }
  return rows;
}

function percent(value: number): string {
  const rounded = (value * 100).toFixed(1);
  return `${value > 0 ? "+" : ""}${rounded === "-0.0" ? "0.0" : rounded}%`;
}

function summaryCells(summary: ErrorSummary): string {
  return `${percent(summary.mean)} | ${percent(summary.worst)} | ${percent(summary.min)} … ${percent(summary.max)}`;
}

export function toMarkdown(rows: readonly Row[]): string {
  const lines = [
    "| category | samples (chars) | estimator | o200k mean | o200k worst | o200k range | cl100k mean | cl100k worst | cl100k range |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    lines.push(
      `| ${CATEGORY_NAMES[row.category]} | ${row.samples} (${row.characters}) | ${row.estimator} | ${summaryCells(row.o200k)} | ${summaryCells(row.cl100k)} |`,
    );
  }
  return lines.join("\n");
}

/**
 * Runs the comparison and returns the table as markdown (for bench/RESULTS.md) and as rows. `smoke`: one
 * sample per category, for CI.
 */
export async function run(options: { smoke?: boolean } = {}): Promise<TokenBenchResult> {
  const agents = await loadAgentsEstimator();
  const estimators: Estimator[] = [
    { name: "contextblocks `estimateTokens`", count: estimateTokens },
    { name: "characters / 4", count: (text) => Math.ceil(text.length / 4) },
    {
      name:
        agents.source === "imported"
          ? "agents `estimateStringTokens`"
          : "agents formula (stand-in: max(chars/4, words×1.3))",
      count: agents.count,
    },
  ];
  const rows = measure(loadSamples(options), estimators);
  const note =
    "Signed error of the estimate against gpt-tokenizer 4.0.0 (negative = under-count). " +
    "worst = the sample error with the largest magnitude; range = lowest … highest sample error.";
  return { rows, markdown: `${toMarkdown(rows)}\n\n${note}`, agentsEstimator: agents.source };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const smoke = process.argv.includes("--smoke");
  const result = await run({ smoke });
  console.log(`Token estimation${smoke ? " (smoke)" : ""}: estimate vs gpt-tokenizer, signed error\n`);
  console.log(result.markdown);
}
