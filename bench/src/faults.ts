/**
 * Faults and load: the long version of the fault and soak harness (tests/faults, `@contextblocks/faults`),
 * whose short version CI runs. Each scenario injects faults into real processes and servers, checks every
 * session after each fault, and reports faults injected, survived and what the checks found. Goal: 0 lost.
 *
 * Run alone: `node --import tsx src/faults.ts [--smoke]` (a few minutes in full: hundreds of processes and
 * a dozen `wrangler dev` starts).
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  type FaultFigures,
  killedWriter,
  manyWritersOnADurableObject,
  postgresRestart,
  slowSubscriber,
  workerdStopped,
} from "@contextblocks/faults";
import { formatInteger, markdownTable } from "./markdown.js";

/** One scenario of the run: what it is called in a failure, and how to run it. */
interface Scenario {
  name: string;
  run(): FaultFigures | Promise<FaultFigures>;
}

export async function run(
  options: { smoke?: boolean } = {},
): Promise<{ markdown: string; figures: FaultFigures[]; failures: string[] }> {
  const smoke = options.smoke === true;
  const kills = smoke ? 1 : 100;
  const scenarios: Scenario[] = [
    {
      name: "killed writer, appends, lean layout, WAL",
      run: () => killedWriter({ mode: "appends", layout: "lean", journalMode: "wal", kills }),
    },
    {
      name: "killed writer, appends, keyed layout, rollback journal",
      run: () => killedWriter({ mode: "appends", layout: "keyed", journalMode: "delete", kills }),
    },
    {
      name: "killed writer, turns, lean layout, WAL",
      run: () => killedWriter({ mode: "turns", layout: "lean", journalMode: "wal", kills }),
    },
    { name: "Postgres restarted", run: () => postgresRestart({ restarts: smoke ? 1 : 30 }) },
    { name: "Durable Object reset", run: () => manyWritersOnADurableObject(smoke ? "short" : "long") },
    { name: "workerd killed", run: () => workerdStopped({ stops: smoke ? 1 : 10 }) },
    {
      name: "slow subscriber",
      run: async () => (await slowSubscriber({ appends: smoke ? 4 : 120 })).figures,
    },
  ];
  const figures: FaultFigures[] = [];
  const failures: string[] = [];
  for (const scenario of scenarios) {
    const started = performance.now();
    try {
      figures.push(await scenario.run());
    } catch (error) {
      // One scenario that cannot run (no Postgres binaries, wrangler refusing to start) leaves the others.
      failures.push(
        `- ${scenario.name}: ${(error instanceof Error ? error.message : String(error)).slice(0, 600)}`,
      );
    }
    process.stderr.write(
      `faults: ${scenario.name}: ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }
  const memory = (bytes: number | null) => (bytes === null ? "" : `${(bytes / 2 ** 20).toFixed(1)} MiB`);
  const table = markdownTable(
    [
      "scenario",
      "faults injected",
      "survived",
      "lost",
      "acknowledged messages",
      "stored twice",
      "forks",
      "half-written messages",
      "batches stored in part",
      "tool calls left without a result",
      "writes cut and retried",
      "calls that never settled",
      "memory (peak writer heap; held by the subscriber)",
    ],
    figures.map((figure) => [
      figure.scenario,
      formatInteger(figure.injected),
      formatInteger(figure.survived),
      formatInteger(figure.lost),
      formatInteger(figure.acknowledged),
      formatInteger(figure.duplicated),
      formatInteger(figure.forks),
      formatInteger(figure.halfWrittenMessages),
      formatInteger(figure.partialBatches),
      formatInteger(figure.invalidNextPrompts),
      figure.retriedWrites === null ? "" : formatInteger(figure.retriedWrites),
      formatInteger(figure.unsettledCalls),
      memory(figure.peakMemoryBytes),
    ]),
  );
  const examples = figures.flatMap((figure) =>
    figure.examples.slice(0, 2).map((example) => `- ${figure.scenario}: ${example}`),
  );
  const markdown = [
    table,
    ...(failures.length === 0 ? [] : ["", "**Scenarios that could not run:**", "", ...failures]),
    "",
    "A fault survived when the checks after it found nothing newly broken: every acknowledged message on the " +
      "active path exactly once, no message with two children, every message reading back as sent, no batch " +
      "(one `appendMessages` call: a model call's messages) stored in part, and the next turn's prompt one the " +
      "AI SDK accepts (it refuses, as OpenAI and Anthropic do, a tool call whose result does not follow). Each " +
      "broken thing counts once however many later checks see it again.",
    ...(examples.length === 0 ? [] : ["", "What broke, the first times:", "", ...examples]),
  ].join("\n");
  return { markdown, figures, failures };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await run({ smoke: process.argv.includes("--smoke") });
  console.log(result.markdown);
  if (result.failures.length > 0) process.exitCode = 1;
}
