import type { ContextBlocks, ContextToolSpec, ToolOutcome } from "@contextblocks/core";
import type {
  ContextToolName,
  EditContextInput,
  EntryInput,
  SearchContextInput,
  SetContextInput,
} from "@contextblocks/core/store-kit";
import type { JSONSchema7, Tool } from "ai";
import { z } from "zod";
import { isReplacedToolInput, replacedToolInputMessage, toolInputSchema } from "./tool-input.js";

/** Options of `contextTools`. */
export interface ContextToolsOptions<Excluded extends ContextToolName = ContextToolName> {
  /** Tools to leave out, for example `["set_context"]` for an agent that may read but not write. */
  exclude?: readonly Excluded[];
}

/**
 * What the SDK passes a tool's `execute` besides the input (`ToolExecutionOptions`), read off `Tool` so the
 * declaration holds on ai 6 and on ai 7 (where `ToolExecutionOptions` takes a type argument).
 */
export type ContextToolCallOptions = Parameters<NonNullable<Tool<unknown, ToolOutcome>["execute"]>>[1];

/**
 * One contextblocks tool. Its input is `unknown` on purpose: the SDK passes whatever the model sent, and
 * the tool checks it (see `contextTools`). Its output is core's `ToolOutcome`; the model reads its text,
 * as an error result when `isError`. Narrow a recorded input with `contextToolInputSchemas(context)`.
 */
export type ContextTool = {
  // Declared first so a direct call resolves to this signature (a promise of the answer text).
  /**
   * Always present: validates the input and resolves to the outcome; never rejects for bad input. Of the
   * options only `toolCallId` is read (the source of a write), so a direct call may leave the rest out
   * (ai 7 requires a `context` the SDK fills in).
   */
  execute(input: unknown, options?: Partial<ContextToolCallOptions>): Promise<ToolOutcome>;
} & Tool<unknown, ToolOutcome>;

/**
 * The tools the blocks allow, typed like a literal `ToolSet` (required keys, so `generateText` results have
 * no "possibly undefined" elements and `tools.set_context.execute(…)` needs no `?.`). The type names every
 * tool not excluded; at run time a tool the blocks do not allow is absent (only read-only blocks: an empty
 * object), so code that calls a tool directly on an arbitrary configuration checks `"name" in tools` first.
 */
export type ContextToolSet<Name extends ContextToolName = ContextToolName> = { [Key in Name]: ContextTool };

/** The arguments of each tool, by name. */
export interface ContextToolInputs {
  set_context: SetContextInput;
  edit_context: EditContextInput;
  search_context: SearchContextInput;
  load_context: EntryInput;
  unload_context: EntryInput;
}

/** zod schemas of valid tool arguments, by tool name, for the tools the blocks allow. */
export type ContextToolInputSchemas = {
  [Name in ContextToolName]?: z.ZodType<ContextToolInputs[Name]>;
};

interface CachedTools {
  fingerprint: string;
  tools: Partial<ContextToolSet>;
}

const cache = new WeakMap<ContextBlocks, Map<string, CachedTools>>();

/**
 * An AI SDK `ToolSet` built from core's tool specs: `set_context`, `edit_context`, `search_context`, `load_context` and
 * `unload_context`, as the blocks allow; only read-only blocks give an empty set.
 *
 * - The definition the model sees (description and JSON Schema, with label enums) is core's, byte for
 *   byte: a pure function of the block configuration, so writes never change it.
 * - The SDK does not validate arguments (its validator accepts every input). A failed SDK validation would
 *   become an SDK tool error worded by the SDK; instead every argument reaches core's `execute`, which
 *   checks it and answers an outcome naming the problem (unknown or read-only label, missing field, wrong
 *   type, `maxTokens`). Nothing is thrown into the agent loop: arguments nested deeper than 100 levels,
 *   which the SDK cannot copy, are replaced by `{}` and answered with an error saying so.
 * - The outcome reaches the model through `toModelOutput`: its text as a `text` output, or as an
 *   `error-text` output when it is an error, so transcripts record failure structurally. Pass the tools to
 *   `convertToModelMessages(messages, { tools })` so UI messages convert the same way.
 * - Called again for the same context and options, it returns the same object while the configuration is
 *   unchanged (a block added or removed at runtime gives a new set).
 */
export function contextTools<const Excluded extends ContextToolName = never>(
  context: ContextBlocks,
  options: ContextToolsOptions<Excluded> = {},
): ContextToolSet<Exclude<ContextToolName, Excluded>> {
  const specs = selectSpecs(context, options);
  const fingerprint = JSON.stringify([
    specs.map((spec) => [spec.name, spec.description, spec.inputSchema]),
    context.getConfigs().map((config) => [config.label, config.kind]),
  ]);
  const optionsKey = JSON.stringify([...(options.exclude ?? [])].sort());
  let byOptions = cache.get(context);
  if (!byOptions) {
    byOptions = new Map();
    cache.set(context, byOptions);
  }
  let tools =
    byOptions.get(optionsKey)?.fingerprint === fingerprint ? byOptions.get(optionsKey)?.tools : undefined;
  if (!tools) {
    const built: Partial<ContextToolSet> = {};
    for (const spec of specs) built[spec.name] = toTool(spec);
    tools = Object.freeze(built);
    byOptions.set(optionsKey, { fingerprint, tools });
  }
  // Only the allowed tools are present: the type's required keys are the trade-off documented above.
  return tools as ContextToolSet<Exclude<ContextToolName, Excluded>>;
}

/**
 * zod schemas of what valid arguments look like, one per tool the blocks allow, converted by zod
 * (`z.fromJSONSchema`) from the same JSON Schema the model sees (their `z.toJSONSchema` equals it). The tools do not use them to reject input;
 * use them to narrow a recorded tool call (`schema.safeParse(part.input)`), for example to render it.
 */
export function contextToolInputSchemas(
  context: ContextBlocks,
  options: ContextToolsOptions = {},
): ContextToolInputSchemas {
  const schemas: Record<string, z.ZodType> = {};
  for (const spec of selectSpecs(context, options)) schemas[spec.name] = z.fromJSONSchema(spec.inputSchema);
  return schemas as ContextToolInputSchemas;
}

function selectSpecs(context: ContextBlocks, options: ContextToolsOptions): ContextToolSpec[] {
  const exclude = new Set(options.exclude ?? []);
  return context.toolSpecs().filter((spec) => !exclude.has(spec.name));
}

function toTool(spec: ContextToolSpec): ContextTool {
  return {
    description: spec.description,
    // Every argument reaches `execute`, which validates and answers with an error outcome (tool-input.ts).
    inputSchema: toolInputSchema<unknown>(spec.inputSchema as JSONSchema7),
    // The call id is recorded as the source of a write (block history).
    execute: async (input: unknown, options?: Partial<ContextToolCallOptions>) => {
      if (isReplacedToolInput(input)) return { isError: true, text: replacedToolInputMessage(spec.name) };
      return spec.execute(input, options?.toolCallId === undefined ? {} : { toolCallId: options.toolCallId });
    },
    toModelOutput: ({ output }) => toolModelOutput(output),
  };
}

/**
 * A contextblocks tool's output (a step's `toolResults[i].output`, a UI tool part's `output`) as core's
 * outcome. A plain string (a transcript written before outcomes) is a success; anything else that is not
 * an outcome is a success whose text is its JSON.
 */
export function toolOutcomeOf(output: unknown): ToolOutcome {
  if (typeof output === "string") return { isError: false, text: output };
  const outcome = output as Partial<ToolOutcome> | null;
  const text = typeof outcome?.text === "string" ? outcome.text : JSON.stringify(output);
  return { isError: outcome?.isError === true, text };
}

/** The model's view of an outcome: an error output for errors, plain text otherwise. */
export function toolModelOutput(output: unknown): { type: "text" | "error-text"; value: string } {
  const outcome = toolOutcomeOf(output);
  return { type: outcome.isError ? "error-text" : "text", value: outcome.text };
}
