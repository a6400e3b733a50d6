import { composedForm } from "../block-definition.js";
import { clipped, errorMessage } from "../describe-value.js";
import { ContextError } from "../errors.js";
import { usagePercent } from "../prompt-format.js";
import type { ContextBlock, WriteSource } from "../types.js";
import type { JsonSchema } from "./fields.js";

export type ContextToolName =
  | "set_context"
  | "edit_context"
  | "search_context"
  | "load_context"
  | "unload_context";

/** What a framework tells a tool about its call; the id is recorded as the source of a write. */
export interface ToolCall {
  toolCallId?: string;
}

/**
 * How a tool call ended. `text` is what the model reads: the result, or `Error: …` naming the problem.
 * Code decides by `isError`, never by the text.
 */
export interface ToolOutcome {
  isError: boolean;
  text: string;
}

/**
 * A tool described as data, for any agent framework. `execute` checks its own input and always resolves to
 * an outcome: failures come back as `{ isError: true, text: "Error: …" }`, never as a thrown error.
 */
export interface ContextToolSpec {
  name: ContextToolName;
  description: string;
  inputSchema: JsonSchema;
  execute(input: unknown, call?: ToolCall): Promise<ToolOutcome>;
}

/** Limits on what a model may send through the tools. */
export interface ToolOptions {
  /** Largest text a tool call may write (content, title and description together), in characters. Default 262,144. */
  maxToolContentLength?: number;
  /**
   * Offer `edit_context` for entries of skill collections (with `key`) even when no plain writable block
   * offers it. Default: entries are editable only beside a plain writable block, so a context of skill
   * collections alone has exactly `agents/context`'s tools (`set_context`, `load_context`, `unload_context`).
   */
  editEntries?: boolean;
}

export const DEFAULT_MAX_TOOL_CONTENT_LENGTH = 262_144;

/** Runs a tool body: its text is a success; a thrown error becomes `Error: …`. */
export async function toolOutcome(body: () => Promise<string>): Promise<ToolOutcome> {
  try {
    return { isError: false, text: await body() };
  } catch (error) {
    return { isError: true, text: `Error: ${errorMessage(error)}` };
  }
}

/** A label that must be one of `allowed`; the error says what the label is and which ones would do. */
export function checkToolLabel(
  label: string,
  allowed: readonly string[],
  known: readonly string[],
  what: string,
  whyNot: (label: string) => string = () => `not ${what}`,
): string {
  if (allowed.includes(label)) return label;
  // The label in another Unicode form (a model types "é" as one character; a label taken from a macOS file
  // name has "e" and a combining accent): the two look the same in the prompt and in any error, so the model
  // could never act on "not found". The clash check keeps at most one block per composed form.
  const composed = composedForm(label);
  const same = known.find((candidate) => candidate !== label && composedForm(candidate) === composed);
  if (same !== undefined) return checkToolLabel(same, allowed, known, what, whyNot);
  const list = quoteLabels(allowed);
  const kinds = `${what.charAt(0).toUpperCase()}${what.slice(1)} blocks`;
  if (!known.includes(label)) {
    throw new ContextError("NOT_FOUND", `Block "${clipped(label)}" not found. ${kinds}: ${list}`, { label });
  }
  throw new ContextError("UNSUPPORTED", `Block "${label}" is ${whyNot(label)}. ${kinds}: ${list}`, { label });
}

/**
 * A label in double quotes, as the tool's JSON Schema enum writes it: `"memory"` for an ordinary label (byte
 * for byte what it always was, which prefix caches and agents' tool lists hold); a label holding `"` or `\`
 * has them escaped (`say "hi"` → `"say \"hi\""`), where bare quotes would end the name early.
 */
export function quoteLabel(label: string): string {
  return JSON.stringify(label);
}

/** Quoted labels for descriptions: `"a", "b"`. */
export function quoteLabels(labels: readonly string[]): string {
  return labels.map(quoteLabel).join(", ");
}

/** The source of a write made by `tool` in `call`. */
export function toolSource(tool: ContextToolName, call: ToolCall | undefined): WriteSource {
  const id = call?.toolCallId;
  return typeof id === "string" ? { kind: "tool", name: tool, toolCallId: id } : { kind: "tool", name: tool };
}

/** The usage line of a write's answer: `42% (25/60 tokens)` or `25 tokens`. */
export function usageOf(block: ContextBlock): string {
  return block.maxTokens
    ? `${usagePercent(block.tokens, block.maxTokens)}% (${block.tokens}/${block.maxTokens} tokens)`
    : `${block.tokens} tokens`;
}
