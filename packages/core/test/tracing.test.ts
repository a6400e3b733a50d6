import { describe, expect, it } from "vitest";
import {
  ContextBlocks,
  type ContextTracer,
  entryKey,
  type TraceAttributes,
  type TraceSpan,
} from "../src/index.js";
import { InMemorySearchProvider } from "../src/memory/index.js";
import { GEN_AI } from "../src/store-kit.js";
import { RecordingProvider } from "./helpers.js";

const SPAN: TraceSpan = { setAttributes: () => undefined };

const fail = (when: string) => new Error(`the tracer failed ${when}`);

/** Tracers that break the hook's contract in every way a tracer can, before, during or after the operation. */
const faulty = {
  "throws before running the operation": {
    span() {
      throw fail("on start");
    },
  },
  "rejects before running the operation": {
    async span() {
      throw fail("on start");
    },
  },
  "runs the operation, then throws at once": {
    span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      void operation(SPAN).catch(() => undefined);
      throw fail("after starting");
    },
  },
  "rejects after the operation settled": {
    async span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      await operation(SPAN).catch(() => undefined);
      throw fail("on end");
    },
  },
  "answers with a value of its own": {
    async span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      await operation(SPAN).catch(() => undefined);
      return "the tracer's own value";
    },
  },
  "runs the operation twice": {
    async span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      await operation(SPAN).catch(() => undefined);
      return operation(SPAN);
    },
  },
  "never runs the operation": {
    async span() {
      return undefined;
    },
  },
  "gives a span whose setAttributes throws": {
    span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      return operation({
        setAttributes() {
          throw fail("setting attributes");
        },
      });
    },
  },
  "throws when asked whether it captures content": {
    get captureContent(): boolean {
      throw fail("reading captureContent");
    },
    span(_name: string, _attributes: unknown, operation: (span: TraceSpan) => Promise<unknown>) {
      return operation(SPAN);
    },
  },
} as unknown as Record<string, ContextTracer>;

/** What a call settled to, comparable across runs. */
async function settled(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await call() };
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { rejected: { code, message } };
  }
}

/** A block write, a refused write and a freeze (which sets attributes once it knows the prompt). */
async function run(tracer: ContextTracer | undefined) {
  const memory = new RecordingProvider();
  const blocks = new ContextBlocks(
    [
      { label: "soul", provider: { get: async () => "You are terse." } },
      { label: "memory", provider: memory },
    ],
    null,
    null,
    tracer === undefined ? {} : { tracer },
  );
  const write = await settled(() => blocks.setBlock("memory", "The user is Ada."));
  const refused = await settled(() => blocks.setBlock("soul", "overwritten"));
  const prompt = await settled(() => blocks.freezeSystemPrompt());
  return { write, refused, prompt, writes: memory.writes };
}

describe("a tracer that fails never changes what an operation does", () => {
  it("untraced, the operations settle as intended (the runs below are compared with this)", async () => {
    const untraced = await run(undefined);
    expect(untraced.writes).toEqual(["The user is Ada."]);
    expect(untraced.write).toMatchObject({ resolved: { content: "The user is Ada." } });
    expect(untraced.refused).toMatchObject({ rejected: { code: "READONLY" } });
    expect(untraced.prompt).toMatchObject({ resolved: expect.stringContaining("The user is Ada.") });
  });

  it.each(Object.entries(faulty))(
    "a tracer that %s: each operation runs once, same outcome",
    async (_, tracer) => {
      expect(await run(tracer)).toEqual(await run(undefined));
    },
  );
});

/** A tracer that keeps every span's attributes (those it starts with and those set later). */
function recordingTracer(captureContent: boolean) {
  const spans: Array<{ name: string; attributes: TraceAttributes }> = [];
  const tracer: ContextTracer = {
    captureContent,
    span(name, attributes, operation) {
      const span = { name, attributes: { ...attributes } };
      spans.push(span);
      return operation({ setAttributes: (more) => Object.assign(span.attributes, more) });
    },
  };
  return { tracer, spans };
}

describe("entry keys and the prompt's hash on spans", () => {
  const FACT = "Ada Lovelace was diagnosed with type 1 diabetes in March.";

  async function writes(captureContent: boolean) {
    const { tracer, spans } = recordingTracer(captureContent);
    const blocks = new ContextBlocks(
      [{ label: "notes", provider: new InMemorySearchProvider() }],
      null,
      null,
      { tracer },
    );
    const setContext = blocks.toolSpecs().find((spec) => spec.name === "set_context");
    expect(await setContext?.execute({ label: "notes", content: FACT })).toMatchObject({ isError: false });
    await blocks.setEntry("notes", "diagnosis", FACT);
    await blocks.freezeSystemPrompt();
    const recordIds = spans.map((span) => span.attributes[GEN_AI.recordId]);
    const hash = spans.find((span) => span.name === "contextblocks.freeze")?.attributes[
      "contextblocks.prompt.sha256"
    ];
    return { recordIds, hash };
  }

  it("a key set_context made from the text, and the prompt's hash, only with captureContent", async () => {
    expect(await writes(false)).toEqual({
      recordIds: [undefined, "diagnosis", undefined],
      hash: undefined,
    });
    expect(await writes(true)).toEqual({
      recordIds: [entryKey(undefined, FACT), "diagnosis", undefined],
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });
});
