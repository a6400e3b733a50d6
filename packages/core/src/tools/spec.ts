import { describe } from "../config.js";
import { ContextError } from "../errors.js";

export type ContextToolName = "set_context" | "search_context" | "load_context" | "unload_context";

/** A JSON Schema object, as tool definitions carry it. */
export type JsonSchema = { [key: string]: unknown };

/**
 * A tool described as data, for any agent framework. `execute` checks its own input and always resolves to
 * a string: failures come back as `Error: …` text the model can act on, never as a thrown error.
 */
export interface ContextToolSpec {
  name: ContextToolName;
  description: string;
  inputSchema: JsonSchema;
  execute(input: unknown): Promise<string>;
}

/** Limits on what a model may send through the tools. */
export interface ToolOptions {
  /** Largest `content` a tool call may write, in characters. Default 262,144. */
  maxToolContentLength?: number;
}

export const DEFAULT_MAX_TOOL_CONTENT_LENGTH = 262_144;

/** Runs a tool body; any error becomes an `Error: …` string. */
export async function toolResult(body: () => Promise<string>): Promise<string> {
  try {
    return await body();
  } catch (error) {
    return `Error: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The tool input as an object, or an error naming what arrived instead. */
export function inputObject(tool: ContextToolName, input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ContextError("INVALID_INPUT", `${tool} expects an object of arguments, got ${describe(input)}`);
  }
  return input as Record<string, unknown>;
}

/** A required string field. */
export function stringField(tool: ContextToolName, input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (value === undefined || value === null) {
    throw new ContextError("INVALID_INPUT", `${tool}: "${field}" is required`);
  }
  if (typeof value !== "string") {
    throw new ContextError("INVALID_INPUT", `${tool}: "${field}" must be a string, got ${describe(value)}`);
  }
  return value;
}

/** An optional string field. */
export function optionalStringField(
  tool: ContextToolName,
  input: Record<string, unknown>,
  field: string,
): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw new ContextError("INVALID_INPUT", `${tool}: "${field}" must be a string, got ${describe(value)}`);
  }
  return value;
}

/** A label that must be one of `allowed`; the error says what the label is and which ones would do. */
export function labelField(
  tool: ContextToolName,
  input: Record<string, unknown>,
  allowed: readonly string[],
  known: readonly string[],
  what: string,
  whyNot: (label: string) => string = () => `not ${what}`,
): string {
  const label = stringField(tool, input, "label");
  if (allowed.includes(label)) return label;
  const list = allowed.map((candidate) => `"${candidate}"`).join(", ");
  if (!known.includes(label)) {
    throw new ContextError("NOT_FOUND", `Block "${label}" not found. ${capitalize(what)} blocks: ${list}`, {
      label,
    });
  }
  throw new ContextError(
    "UNSUPPORTED",
    `Block "${label}" is ${whyNot(label)}. ${capitalize(what)} blocks: ${list}`,
    {
      label,
    },
  );
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Quoted labels for descriptions: `"a", "b"`. */
export function quoteLabels(labels: readonly string[]): string {
  return labels.map((label) => `"${label}"`).join(", ");
}
