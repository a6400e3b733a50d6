import { ContextError } from "../errors.js";
import { entryKey } from "../keys.js";
import { type FieldTable, type InputOf, inputSchema, readInput } from "./fields.js";
import type { ToolHost } from "./host.js";
import {
  type ContextToolSpec,
  checkToolLabel,
  quoteLabel,
  quoteLabels,
  toolOutcome,
  toolSource,
  usageOf,
} from "./spec.js";

/** `set_context` arguments (`metadata` is offered only when a keyed block accepts writes). */
export const SET_CONTEXT_FIELDS = {
  label: { type: "string", required: true, description: "Block label to write to" },
  content: { type: "string", required: true, description: "The main content to write to the block." },
  action: { type: "string", enum: ["replace", "append"], description: "replace (default) or append" },
  metadata: {
    type: "object",
    description: "Optional metadata for keyed entries.",
    fields: {
      title: {
        type: "string",
        description:
          "Short title. Used as a stable identifier — entries with the same title are updated in place, different titles create new entries.",
      },
      description: {
        type: "string",
        description:
          "One-line summary shown alongside the title in the system prompt so the model can decide when to load the entry.",
      },
    },
  },
} as const satisfies FieldTable;

export type SetContextInput = InputOf<typeof SET_CONTEXT_FIELDS>;

const KIND_NOTE = {
  writable: "writable",
  searchable: "searchable, keyed entries",
  // agents' words for a skill block (`agents/experimental/memory/session`), so migrated definitions match.
  loadable: "skill collection, keyed entries",
  readonly: "read-only",
} as const;

/** `set_context`: replace or append to a writable block, or add or update one entry of a keyed block. */
export function setContextTool(host: ToolHost, maxContentLength: number): ContextToolSpec | null {
  const configs = host.getConfigs();
  const writable = configs.filter((config) => config.kind !== "readonly" && config.writable);
  if (writable.length === 0) return null;
  const keyed = writable.filter((config) => config.kind !== "writable");
  // The words agents/context uses when every keyed block is searchable, so migrated tool definitions match.
  const keyedKinds = new Set(keyed.map((config) => config.kind));
  const keyedWord = keyedKinds.size === 1 ? `${[...keyedKinds][0]} blocks` : "keyed blocks";
  const labels = writable.map((config) => config.label);
  const known = configs.map((config) => config.label);

  const { metadata, ...plain } = SET_CONTEXT_FIELDS;
  const base = { ...plain, label: { ...plain.label, enum: labels } };
  const fields: FieldTable =
    keyed.length === 0
      ? base
      : {
          ...base,
          metadata: {
            ...metadata,
            description: `Optional metadata for keyed entries (${keyedWord}: ${quoteLabels(keyed.map((config) => config.label))}). A title keeps updates stable; a description helps the model pick the right entry.`,
          },
        };
  const blockList = writable
    .map(
      (config) =>
        `- ${quoteLabel(config.label)} (${KIND_NOTE[config.kind]}): ${config.description ?? "no description"}`,
    )
    .join("\n");
  const metadataHint =
    keyed.length > 0
      ? `\n\nFor ${keyedWord}, pass \`metadata: { title, description }\` — title stabilises updates, description helps the model pick entries. Metadata is optional.`
      : "";

  return {
    name: "set_context",
    description: `Write to a context block. Available blocks:\n${blockList}\n\nWrites are durable and persist across sessions.${metadataHint}`,
    inputSchema: inputSchema(fields),
    execute: (input, call) =>
      toolOutcome(async () => {
        const args = readInput("set_context", fields, input) as SetContextInput;
        const source = toolSource("set_context", call);
        const label = checkToolLabel(args.label, labels, known, "writable", () => "readonly");
        const { content } = args;
        const title = args.metadata?.title;
        const description = args.metadata?.description;
        const length = content.length + (title?.length ?? 0) + (description?.length ?? 0);
        if (length > maxContentLength) {
          throw new ContextError(
            "INVALID_INPUT",
            `set_context: content${title || description ? " and metadata" : ""} is ${length} characters; the limit is ${maxContentLength}`,
            { label },
          );
        }
        const config = writable.find((candidate) => candidate.label === label);
        if (config && config.kind !== "writable") {
          const key = entryKey(title, content);
          await host.setEntry(label, key, content, description, { source });
          return `Indexed "${key}" in ${label}.`;
        }
        const block =
          args.action === "append"
            ? await host.appendToBlock(label, content, { source })
            : await host.setBlock(label, content, { source });
        return `Written to ${label}. Usage: ${usageOf(block)}`;
      }),
  };
}
