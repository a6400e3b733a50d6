import { type ContextBlocks, parseSections } from "@contextblocks/core";
import { labelOfHeader } from "@contextblocks/core/store-kit";
import { asSchema, type ToolSet } from "ai";
import { ignoreCacheHints } from "./pipeline/cache-hints.js";

/**
 * What a request's cached prefix is made of, in either form:
 * - a prepared request (`prepareContextTurn`'s result, or any `{ system, tools }` given to `generateText`);
 * - the call options a language model received (`MockLanguageModelV3`'s `doGenerateCalls[i]` or
 *   `doStreamCalls[i]`): leading system messages of `prompt`, and `tools` as sent.
 */
export type PrefixSource =
  | { system?: string | undefined; tools?: ToolSet | undefined; messages?: readonly unknown[] | undefined }
  | {
      prompt: ReadonlyArray<{ role: string; content: unknown }>;
      tools?: ReadonlyArray<{ name: string }> | undefined;
    };

/** The prefix as the provider receives it: the system text, each tool definition, each message. */
export interface PrefixSnapshot {
  system: string;
  /**
   * `[name, JSON of the definition the SDK passes to the provider]`, in the order sent. The definition's keys
   * are put in one fixed order first: ai 6 and ai 7 build the same definition with its keys in a different
   * order, and the provider serializes the request itself.
   */
  tools: Array<[name: string, definition: string]>;
  /** Each message after the system prompt, as JSON. */
  messages: string[];
}

/** Options of `comparePrefix`. */
export interface ComparePrefixOptions {
  /**
   * Names changed blocks by their real labels. Without it, a changed block is named by its header's
   * label, which the prompt upper-cases.
   */
  context?: Pick<ContextBlocks, "getConfigs">;
}

/** What differs between two requests' cached prefixes. */
export interface PrefixComparison {
  /** System prompt and tool definitions byte-identical. */
  identical: boolean;
  system: {
    identical: boolean;
    /** Blocks whose sections differ, were added or were removed, in prompt order. */
    changedBlocks: string[];
  };
  tools: {
    identical: boolean;
    /** Tools whose serialized definition differs, plus the added and removed ones. */
    changed: string[];
    added: string[];
    removed: string[];
    /** Same definitions in a different order (the order is part of the prefix). */
    reordered: boolean;
  };
  /**
   * How many of the previous request's messages the next one repeats byte for byte at its start. The
   * provider can reuse its cache up to there (when system and tools are identical). Messages grow from turn
   * to turn, so they do not count toward `identical`.
   */
  messages: { sharedPrefix: number; previousCount: number };
  /** One line per finding, for a test failure message. */
  message: string;
}

/** Serializes a request's prefix the way the SDK sends it: system text, then each tool definition. */
export async function prefixSnapshot(source: PrefixSource): Promise<PrefixSnapshot> {
  if ("prompt" in source) {
    const system: string[] = [];
    let first = 0;
    for (const message of source.prompt) {
      if (message.role !== "system") break;
      system.push(typeof message.content === "string" ? message.content : JSON.stringify(message.content));
      first += 1;
    }
    return {
      system: system.join("\n"),
      tools: (source.tools ?? []).map((definition) => [definition.name, definitionJson(definition)]),
      messages: source.prompt.slice(first).map((message) => JSON.stringify(message, ignoreCacheHints)),
    };
  }
  const tools: PrefixSnapshot["tools"] = [];
  for (const [name, tool] of Object.entries(source.tools ?? {})) {
    tools.push([name, definitionJson(await toolDefinition(name, tool))]);
  }
  return {
    system: source.system ?? "",
    tools,
    messages: (source.messages ?? []).map((message) => JSON.stringify(message, ignoreCacheHints)),
  };
}

/** The keys of a tool definition, in the order `definitionJson` writes them (others follow, sorted). */
const DEFINITION_KEYS = [
  "type",
  "name",
  "id",
  "description",
  "inputSchema",
  "inputExamples",
  "args",
  "providerOptions",
  "strict",
];

/** A tool definition as JSON, its top-level keys in `DEFINITION_KEYS` order. */
function definitionJson(definition: object): string {
  const entries = Object.entries(definition);
  const rank = (key: string) => {
    const index = DEFINITION_KEYS.indexOf(key);
    return index === -1 ? DEFINITION_KEYS.length : index;
  };
  entries.sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(entries));
}

/** The definition object the SDK builds for a tool (see its `prepareToolsAndToolChoice`). */
async function toolDefinition(name: string, tool: ToolSet[string]): Promise<object> {
  if (tool.type === "provider") {
    return { type: "provider", name, id: tool.id, args: tool.args };
  }
  return {
    type: "function",
    name,
    description: tool.description,
    inputSchema: await asSchema(tool.inputSchema).jsonSchema,
    ...(tool.inputExamples != null ? { inputExamples: tool.inputExamples } : {}),
    providerOptions: tool.providerOptions,
    ...(tool.strict != null ? { strict: tool.strict } : {}),
  };
}

/**
 * Compares the cached prefix of two requests: whether the system prompt and the tool definitions are
 * byte-identical and, if not, which blocks (sections of the prompt, parsed with core's `parseSections`)
 * and which tools changed. For tests: `expect((await comparePrefix(turn1, turn2)).identical).toBe(true)`,
 * or `assertStablePrefix`.
 */
export async function comparePrefix(
  previous: PrefixSource,
  next: PrefixSource,
  options: ComparePrefixOptions = {},
): Promise<PrefixComparison> {
  const [before, after] = await Promise.all([prefixSnapshot(previous), prefixSnapshot(next)]);
  const blocks = options.context?.getConfigs() ?? [];

  const systemIdentical = before.system === after.system;
  const changedBlocks = systemIdentical ? [] : changedSections(before.system, after.system, blocks);

  const beforeTools = new Map(before.tools);
  const afterTools = new Map(after.tools);
  const added = [...afterTools.keys()].filter((name) => !beforeTools.has(name));
  const removed = [...beforeTools.keys()].filter((name) => !afterTools.has(name));
  const differing = [...afterTools].flatMap(([name, definition]) =>
    beforeTools.has(name) && beforeTools.get(name) !== definition ? [name] : [],
  );
  const toolsIdentical = JSON.stringify(before.tools) === JSON.stringify(after.tools);
  const changed = [...differing, ...added, ...removed];
  const reordered = !toolsIdentical && changed.length === 0;

  let sharedPrefix = 0;
  while (
    sharedPrefix < before.messages.length &&
    before.messages[sharedPrefix] === after.messages[sharedPrefix]
  )
    sharedPrefix += 1;

  const comparison: Omit<PrefixComparison, "message"> = {
    identical: systemIdentical && toolsIdentical,
    system: { identical: systemIdentical, changedBlocks },
    tools: { identical: toolsIdentical, changed, added, removed, reordered },
    messages: { sharedPrefix, previousCount: before.messages.length },
  };
  return { ...comparison, message: describePrefixComparison(comparison) };
}

/** Throws an error that says what changed when the two prefixes are not byte-identical. */
export async function assertStablePrefix(
  previous: PrefixSource,
  next: PrefixSource,
  options: ComparePrefixOptions = {},
): Promise<void> {
  const comparison = await comparePrefix(previous, next, options);
  if (!comparison.identical) throw new Error(comparison.message);
}

/** A readable account of a comparison: one line per finding. */
export function describePrefixComparison(comparison: Omit<PrefixComparison, "message">): string {
  const { system, tools, messages } = comparison;
  const lines = comparison.identical
    ? ["Prefix stable: system prompt and tool definitions are byte-identical."]
    : ["Prefix changed (the provider's prompt cache is lost from the first changed byte on):"];
  if (!system.identical) {
    lines.push(
      system.changedBlocks.length > 0
        ? `- system prompt: blocks changed: ${system.changedBlocks.join(", ")}`
        : "- system prompt: changed outside block sections (order, separators or unstructured text)",
    );
  }
  if (!tools.identical) {
    const modified = tools.changed.filter(
      (name) => !tools.added.includes(name) && !tools.removed.includes(name),
    );
    if (modified.length > 0) lines.push(`- tools: definitions changed: ${modified.join(", ")}`);
    if (tools.added.length > 0) lines.push(`- tools: added: ${tools.added.join(", ")}`);
    if (tools.removed.length > 0) lines.push(`- tools: removed: ${tools.removed.join(", ")}`);
    if (tools.reordered) lines.push("- tools: same definitions in a different order");
  }
  if (messages.sharedPrefix < messages.previousCount) {
    lines.push(
      `- messages: the next request repeats ${messages.sharedPrefix} of the previous ${messages.previousCount} messages; from message ${messages.sharedPrefix + 1} on the cache is rebuilt`,
    );
  }
  return lines.join("\n");
}

/** Names of the blocks whose sections differ between two prompts, in order of appearance. */
function changedSections(
  before: string,
  after: string,
  blocks: ReadonlyArray<{ label: string; description?: string | undefined }>,
): string[] {
  const named = (prompt: string) =>
    new Map(parseSections(prompt).map((section) => [labelOfHeader(section.header, blocks), section.text]));
  const beforeSections = named(before);
  const afterSections = named(after);
  const names = [...new Set([...beforeSections.keys(), ...afterSections.keys()])];
  return names.filter((name) => beforeSections.get(name) !== afterSections.get(name));
}
