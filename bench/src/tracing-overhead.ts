/**
 * What tracing costs: one "memory turn" (a `setBlock`, a `search`, a session `appendMessage` and a
 * `getHistory`) on in-memory storage, so the figure is the library's own cost with nothing of storage's to
 * hide it. Four variants, timed in interleaved rounds (so drift on a shared machine hits them alike):
 * no tracer twice (the second is the noise band), `@contextblocks/otel` with no tracer provider registered
 * (the OpenTelemetry API's no-op spans), and with a recording provider (`BasicTracerProvider` with a
 * `SimpleSpanProcessor` into an `InMemorySpanExporter`, reset each round).
 *
 * Run alone: `node --import tsx src/tracing-overhead.ts [--smoke]`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { ContextBlocks, type ContextTracer } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySearchProvider, InMemoryStore } from "@contextblocks/core/memory";
import { otelTracer } from "@contextblocks/otel";
import { Session } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { formatDuration, markdownTable } from "./markdown.js";
import { median } from "./statistics.js";

interface Variant {
  name: string;
  tracer: ContextTracer | undefined;
}

async function setup(tracer: ContextTracer | undefined) {
  const store = new InMemoryStore();
  const context = new ContextBlocks(
    [
      { label: "memory", provider: new InMemoryContextProvider({ store }) },
      { label: "notes", provider: new InMemorySearchProvider({ store }) },
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
    null,
    tracer ? { tracer } : {},
  );
  for (let index = 0; index < 50; index += 1)
    await context.setEntry("notes", `n${index}`, `note ${index} about deploys`);
  const session = new Session({
    store: inMemoryBackend().messages("bench"),
    context,
    ...(tracer ? { tracer } : {}),
  });
  await context.freezeSystemPrompt();
  return { context, session };
}

export async function run(options: { smoke?: boolean } = {}): Promise<{ markdown: string }> {
  const rounds = options.smoke ? 3 : 25;
  const iterations = options.smoke ? 20 : 400;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const variants: Variant[] = [
    { name: "no tracer", tracer: undefined },
    { name: "no tracer (again: the noise band)", tracer: undefined },
    // trace.getTracer with no global provider registered: the API's no-op tracer.
    {
      name: "`otelTracer()`, no tracer provider registered",
      tracer: otelTracer({ tracer: trace.getTracer("bench") }),
    },
    {
      name: "`otelTracer()`, recording (`BasicTracerProvider` + `InMemorySpanExporter`)",
      tracer: otelTracer({ tracer: provider.getTracer("bench") }),
    },
  ];
  const times = variants.map(() => [] as number[]);
  const states = await Promise.all(variants.map((variant) => setup(variant.tracer)));
  let counter = 0;
  for (let round = 0; round < rounds + 1; round += 1) {
    for (const [index, state] of states.entries()) {
      exporter.reset();
      const start = performance.now();
      for (let iteration = 0; iteration < iterations; iteration += 1) {
        counter += 1;
        await state.context.setBlock("memory", `fact ${counter}`);
        await state.context.search("notes", "deploys");
        await state.session.appendMessage({
          id: `m${counter}`,
          role: "user",
          parts: [{ type: "text", text: "hi" }],
        });
        if (iteration % 20 === 0) await state.session.getHistory();
      }
      const elapsed = (performance.now() - start) / iterations;
      if (round > 0) times[index]?.push(elapsed);
    }
    // Keep the sessions short so every round measures the same work.
    for (const [index, variant] of variants.entries()) {
      if (round % 5 === 4) states[index] = await setup(variant.tracer);
    }
  }
  const baseline = median(times[0] ?? []);
  const rows = variants.map((variant, index) => {
    const value = median(times[index] ?? []);
    const change = ((value - baseline) / baseline) * 100;
    return [
      variant.name,
      formatDuration(value),
      index === 0 ? "—" : `${change >= 0 ? "+" : ""}${change.toFixed(1)}%`,
    ];
  });
  const markdown = [
    markdownTable(["Tracer", "Median time per memory turn", "vs no tracer"], rows),
    "",
    `A memory turn: \`setBlock\`, \`search\` on a 50-entry searchable block, \`Session.appendMessage\`, and \`getHistory\` every 20th turn, all in memory; ${rounds} interleaved rounds of ${iterations} turns, median of the rounds. The recording variant makes 3 to 4 spans per turn.`,
  ].join("\n");
  return { markdown };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await run({ smoke: process.argv.includes("--smoke") });
  process.stdout.write(`${result.markdown}\n`);
}
