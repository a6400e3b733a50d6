import { createHash } from "node:crypto";
import { contextTools } from "@contextblocks/ai";
import { ContextBlocks, entryKey } from "@contextblocks/core";
import { InMemorySearchProvider, InMemorySkillProvider } from "@contextblocks/core/memory";
import { answer, scriptedModel, toolStep } from "@contextblocks/test-kit/model";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { otelTracer } from "../src/index.js";

const FACT = "Ada Lovelace was diagnosed with type 1 diabetes in March.";
const TITLE = "Ada's insulin plan";
const PLAN = "Ada takes insulin before meals and checks her glucose at night.";
/** The keys `set_context` makes: one from the fact's text (slug and FNV-1a hash), one from the title. */
const FACT_KEY = entryKey(undefined, FACT);
const PLAN_KEY = entryKey(TITLE, PLAN);

/**
 * A turn in which the model writes a fact without a title and a skill with one, loads the skill, edits it,
 * and names a key that does not exist (the error quotes it); then the prompt is frozen.
 */
async function turn(captureContent: boolean) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const blocks = new ContextBlocks(
    [
      { label: "notes", description: "Searchable notes", provider: new InMemorySearchProvider() },
      { label: "care", description: "Care plans", provider: new InMemorySkillProvider() },
    ],
    null,
    null,
    { tracer: otelTracer({ tracer: provider.getTracer("test"), captureContent }), editEntries: true },
  );
  const model = scriptedModel([
    toolStep([
      { toolName: "set_context", input: { label: "notes", content: FACT } },
      {
        toolName: "set_context",
        input: { label: "care", content: PLAN, metadata: { title: TITLE, description: "Insulin" } },
      },
    ]),
    toolStep([
      { toolName: "load_context", input: { label: "care", key: PLAN_KEY } },
      {
        toolName: "edit_context",
        input: { label: "care", key: PLAN_KEY, old_str: "at night", new_str: "at bedtime" },
      },
      { toolName: "edit_context", input: { label: "care", key: FACT_KEY, old_str: "a", new_str: "b" } },
    ]),
    answer("Noted."),
  ]);
  const result = await generateText({
    model,
    tools: contextTools(blocks),
    prompt: "Remember this.",
    stopWhen: stepCountIs(4),
  });
  const outputs = result.steps.flatMap((step) => step.toolResults.map((toolResult) => toolResult.output));
  const prompt = await blocks.freezeSystemPrompt();
  return { spans: exporter.getFinishedSpans(), outputs, promptHash: sha256(prompt) };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Everything a span exports as text: attribute values, status message, events and their attributes. */
function exported(span: ReadableSpan): string {
  return JSON.stringify([span.name, span.attributes, span.status, span.events]);
}

/** Strings derived from what the model wrote: each would tell a reader of the trace something of it. */
function derivedFromContent(promptHash: string): Record<string, string> {
  return {
    fact: FACT,
    "key made from the fact": FACT_KEY,
    "FNV-1a hash of the fact": FACT_KEY.slice(FACT_KEY.lastIndexOf("-") + 1),
    "slug of the fact": "ada-lovelace",
    "title the model chose": TITLE,
    "key made from the title": PLAN_KEY,
    "slug of the title": "ada-s-insulin",
    "SHA-256 of the prompt": promptHash,
  };
}

describe("spans carry nothing derived from content unless the app opts in", () => {
  it("without opt-in: no key made from text, no title the model chose, no hash of content, no error text", async () => {
    const { spans, outputs, promptHash } = await turn(false);
    // The turn did what the assertions below rely on: two entries written, one loaded, one edit, one refusal.
    expect(outputs.map((output) => (output as { isError: boolean }).isError)).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(spans.map((span) => span.name).sort()).toEqual([
      "contextblocks.freeze",
      "search_memory",
      "upsert_memory",
      "upsert_memory",
      "upsert_memory",
      "upsert_memory",
    ]);
    const trace = spans.map(exported).join("\n");
    const leaked = Object.entries(derivedFromContent(promptHash)).filter(([, text]) => trace.includes(text));
    expect(leaked.map(([what]) => what)).toEqual([]);
    // What stays: the operation, the block, the count, and error.type for the refusal.
    const refused = spans.find((span) => span.attributes["error.type"] !== undefined);
    expect(refused?.attributes).toMatchObject({
      "gen_ai.operation.name": "upsert_memory",
      "gen_ai.memory.store.id": "care",
      "gen_ai.memory.record.count": 1,
      "error.type": "NOT_FOUND",
    });
    expect(refused?.status.code).toBe(2);
  });

  it("with opt-in: the same turn's spans carry the keys, the prompt's hash and the error text", async () => {
    const { spans, promptHash } = await turn(true);
    const recordIds = spans.map((span) => span.attributes["gen_ai.memory.record.id"]);
    expect(recordIds).toEqual(expect.arrayContaining([FACT_KEY, PLAN_KEY]));
    const freeze = spans.find((span) => span.name === "contextblocks.freeze");
    expect(freeze?.attributes["contextblocks.prompt.sha256"]).toBe(promptHash);
    const refused = spans.find((span) => span.attributes["error.type"] === "NOT_FOUND");
    expect(refused?.status.message).toContain(FACT_KEY);
    expect(refused?.events.map((event) => event.name)).toEqual(["exception"]);
  });
});
