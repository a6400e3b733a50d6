/**
 * Where contextblocks is behind, read from the tables that other benchmark files print, so RESULTS.md says it
 * plainly under every table, not only under the ones run-all renders itself. Each reader returns the rows
 * it found and the statements about the rows where contextblocks is behind; a reader that finds no rows
 * (the format changed) says so instead of claiming nothing is behind.
 */

export interface BehindReport {
  /** Rows the reader recognised. */
  rows: number;
  /** One statement per row where contextblocks is behind. */
  behind: string[];
}

/** The summary line(s) to print under a table. */
export function behindSummary(report: BehindReport, what: string): string {
  if (report.rows === 0) {
    return `- The rows of this table could not be read to find where contextblocks is behind: read the ${what} above.`;
  }
  if (report.behind.length === 0) return `- contextblocks is not behind on any row of the ${what}.`;
  return [
    `- **contextblocks is behind on ${report.behind.length} row(s) of the ${what}:**`,
    ...report.behind.map((statement) => `  - ${statement}`),
  ].join("\n");
}

/**
 * bench/src/row-cost-sqlite.ts: `#### N writable blocks` headings over rows
 * `| operation | read / written (statements) | read / written (statements) |` (contextblocks first).
 */
export function behindInDurableBlocks(markdown: string): BehindReport {
  const report: BehindReport = { rows: 0, behind: [] };
  let group = "";
  for (const line of markdown.split("\n")) {
    const heading = /^#+\s+(.*)$/.exec(line);
    if (heading) {
      group = heading[1]!.trim();
      continue;
    }
    const row =
      /^\|\s*([^|]+?)\s*\|\s*(\d+) \/ (\d+)(?: \((\d+)\))?\s*\|\s*(\d+) \/ (\d+)(?: \((\d+)\))?\s*\|/.exec(
        line,
      );
    if (!row) continue;
    report.rows += 1;
    const [, operation, ourRead, ourWritten, , theirRead, theirWritten] = row;
    const reads = Number(ourRead) > Number(theirRead);
    const writes = Number(ourWritten) > Number(theirWritten);
    if (reads || writes) {
      report.behind.push(
        `${group}, ${operation}: ${ourRead} / ${ourWritten} rows read / written against ${theirRead} / ${theirWritten}` +
          ` (more ${reads && writes ? "reads and writes" : reads ? "reads" : "writes"})`,
      );
    }
  }
  return report;
}

/**
 * bench/src/fts5-scale.ts: rows `entries  operation  ours  agents  ratio x` (ratio = agents / ours, time).
 * Behind: ratio below 0.95.
 */
export function behindInSearchScale(text: string): BehindReport {
  const report: BehindReport = { rows: 0, behind: [] };
  for (const line of text.split("\n")) {
    // The floor rows: our search against one statement on a plain FTS5 table of the same entries (goal: at most 1.5x).
    const floor = /^\s*(\d+)\s+(search floor \(\w+\))\s+([\d.]+)\s+-\s+ours\/floor ([\d.]+)x\s*$/.exec(line);
    if (floor) {
      report.rows += 1;
      const [, entries, operation, floorTime, ratio] = floor;
      if (Number(ratio) > 1.5) {
        report.behind.push(
          `${Number(entries).toLocaleString("en-US")} entries, ${operation}: our search takes ${ratio}× one ` +
            `statement on a plain FTS5 table (${floorTime} ms); the goal is at most 1.5×`,
        );
      }
      continue;
    }
    // An optional last column says how many matches each side returned (`10.0 / 0.0`).
    const row = /^\s*(\d+)\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x(?:\s+([\d.]+ \/ [\d.]+))?\s*$/.exec(
      line,
    );
    if (!row) continue;
    report.rows += 1;
    const [, entries, operation, ours, agents, ratio, matches] = row;
    if (Number(ratio) < 0.95) {
      report.behind.push(
        `${Number(entries).toLocaleString("en-US")} entries, ${operation}: ${ours} ms against ${agents} ms ` +
          `(${(Number(agents) / Number(ours)).toFixed(3)}×)` +
          (matches ? `, returning ${matches} matches (contextblocks / agents)` : ""),
      );
    }
  }
  return report;
}

/**
 * bench/src/fts5-retrieval.ts: rows `<provider>, <variant>  hit@1  hit@3  hit@10  MRR@10  empty`, one for
 * `@contextblocks/fts5` and one for `agents/context` per variant. Behind: a lower hit rate or MRR.
 */
export function behindInRetrieval(text: string): BehindReport {
  const report: BehindReport = { rows: 0, behind: [] };
  const figures = new Map<string, { ours?: number[]; agents?: number[] }>();
  for (const line of text.split("\n")) {
    const row =
      /^(@contextblocks\/fts5|agents\/context), (.+?)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)\s+\d+\s*$/.exec(
        line,
      );
    if (!row) continue;
    report.rows += 1;
    const [, provider, variant, ...values] = row;
    const entry = figures.get(variant!) ?? {};
    entry[provider === "agents/context" ? "agents" : "ours"] = values.map(Number);
    figures.set(variant!, entry);
  }
  const names = ["hit@1", "hit@3", "hit@10", "MRR@10"];
  for (const [variant, { ours, agents }] of figures) {
    if (!ours || !agents) continue;
    const worse = names.filter((_, index) => ours[index]! < agents[index]!);
    if (worse.length > 0) report.behind.push(`${variant}: lower ${worse.join(", ")} than agents/context`);
  }
  return report;
}

/** The token benchmark's rows (bench/src/tokens.ts `run().rows`), as far as this reader needs them. */
export interface TokenRow {
  category: string;
  estimator: string;
  o200k: { mean: number; min: number };
}

/**
 * Token estimation: behind where contextblocks' estimate is further from o200k on average than agents', or
 * under-counts worse (a lower smallest error) in some sample.
 */
export function behindInTokens(rows: readonly TokenRow[]): BehindReport {
  const report: BehindReport = { rows: rows.length, behind: [] };
  const percent = (value: number) => `${value > 0 ? "+" : ""}${(value * 100).toFixed(1)}%`;
  for (const ours of rows.filter((row) => row.estimator.startsWith("contextblocks"))) {
    const agents = rows.find((row) => row.category === ours.category && row.estimator.startsWith("agents"));
    if (!agents) continue;
    if (Math.abs(ours.o200k.mean) > Math.abs(agents.o200k.mean)) {
      report.behind.push(
        `${ours.category}: mean error against o200k ${percent(ours.o200k.mean)}, agents ${percent(agents.o200k.mean)}` +
          (ours.o200k.min > agents.o200k.min && ours.o200k.min >= 0
            ? " (contextblocks over-counts, the safe side for a `maxTokens` limit; agents under-counts down to " +
              `${percent(agents.o200k.min)})`
            : ""),
      );
    }
    if (ours.o200k.min < Math.min(0, agents.o200k.min)) {
      report.behind.push(
        `${ours.category}: under-counts down to ${percent(ours.o200k.min)}, agents ${percent(agents.o200k.min)}`,
      );
    }
  }
  return report;
}
