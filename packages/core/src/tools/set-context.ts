import { acceptsWrites } from "../capabilities.js";
import type { ContextBlocks } from "../context-blocks.js";
import { ContextError } from "../errors.js";
import { entryKey } from "../keys.js";
import { usagePercent } from "../render.js";
import {
  type ContextToolSpec,
  inputObject,
  labelField,
  optionalStringField,
  quoteLabels,
  stringField,
  toolResult,
} from "./spec.js";

const KIND_NOTE = {
  writable: "writable",
  searchable: "searchable, keyed entries",
  loadable: "loadable, keyed entries",
  readonly: "read-only",
} as const;

/** `set_context`: replace or append to a writable block, or add or update one entry of a keyed block. */
export function setContextTool(context: ContextBlocks, maxContentLength: number): ContextToolSpec | null {
  const configs = context.getConfigs();
  const writable = configs.filter((config) => config.kind !== "readonly" && acceptsWrites(config.provider));
  if (writable.length === 0) return null;
  const keyed = writable.filter((config) => config.kind !== "writable");
  // The words agents/context uses when every keyed block is searchable, so migrated tool definitions match.
  const keyedKinds = new Set(keyed.map((config) => config.kind));
  const keyedWord = keyedKinds.size === 1 ? `${[...keyedKinds][0]} blocks` : "keyed blocks";
  const labels = writable.map((config) => config.label);
  const known = configs.map((config) => config.label);

  const properties: Record<string, unknown> = {
    label: { type: "string", enum: labels, description: "Block label to write to" },
    content: { type: "string", description: "The main content to write to the block." },
    action: { type: "string", enum: ["replace", "append"], description: "replace (default) or append" },
  };
  if (keyed.length > 0) {
    properties.metadata = {
      type: "object",
      description: `Optional metadata for keyed entries (${keyedWord}: ${quoteLabels(keyed.map((config) => config.label))}). A title keeps updates stable; a description helps the model pick the right entry.`,
      properties: {
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
    };
  }
  const blockList = writable
    .map(
      (config) =>
        `- "${config.label}" (${KIND_NOTE[config.kind]}): ${config.description ?? "no description"}`,
    )
    .join("\n");
  const metadataHint =
    keyed.length > 0
      ? `\n\nFor ${keyedWord}, pass \`metadata: { title, description }\` — title stabilises updates, description helps the model pick entries. Metadata is optional.`
      : "";

  return {
    name: "set_context",
    description: `Write to a context block. Available blocks:\n${blockList}\n\nWrites are durable and persist across sessions.${metadataHint}`,
    inputSchema: { type: "object", properties, required: ["label", "content"], additionalProperties: false },
    execute: (input) =>
      toolResult(async () => {
        const args = inputObject("set_context", input);
        const label = labelField("set_context", args, labels, known, "writable", () => "readonly");
        const content = stringField("set_context", args, "content");
        if (content.length > maxContentLength) {
          throw new ContextError(
            "INVALID_INPUT",
            `set_context: content is ${content.length} characters; the limit is ${maxContentLength}`,
            { label },
          );
        }
        const action = optionalStringField("set_context", args, "action") ?? "replace";
        if (action !== "replace" && action !== "append") {
          throw new ContextError(
            "INVALID_INPUT",
            `set_context: "action" must be "replace" or "append", got "${action}"`,
          );
        }
        const metadata = args.metadata;
        if (
          metadata !== undefined &&
          metadata !== null &&
          (typeof metadata !== "object" || Array.isArray(metadata))
        ) {
          throw new ContextError(
            "INVALID_INPUT",
            `set_context: "metadata" must be an object with title and description`,
          );
        }
        const fields = (metadata ?? {}) as Record<string, unknown>;
        const title = optionalStringField("set_context", fields, "title");
        const description = optionalStringField("set_context", fields, "description");

        const config = writable.find((candidate) => candidate.label === label);
        if (config && config.kind !== "writable") {
          const key = entryKey(title, content);
          await context.setEntry(label, key, content, description);
          return `Indexed "${key}" in ${label}.`;
        }
        const block =
          action === "append"
            ? await context.appendToBlock(label, content)
            : await context.setBlock(label, content);
        const usage = block.maxTokens
          ? `${usagePercent(block.tokens, block.maxTokens)}% (${block.tokens}/${block.maxTokens} tokens)`
          : `${block.tokens} tokens`;
        return `Written to ${label}. Usage: ${usage}`;
      }),
  };
}
