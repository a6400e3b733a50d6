import { ContextError } from "../errors.js";
import { type FieldTable, type InputOf, inputSchema, readInput } from "./fields.js";
import type { ToolHost } from "./host.js";
import {
  type ContextToolSpec,
  checkToolLabel,
  quoteLabels,
  toolOutcome,
  toolSource,
  usageOf,
} from "./spec.js";

/** `edit_context` arguments, named as in the text-editor tools models are trained on (`str_replace`). */
export const EDIT_CONTEXT_FIELDS = {
  label: { type: "string", required: true, description: "Writable block label to edit" },
  old_str: {
    type: "string",
    required: true,
    description:
      "Exact text to replace, copied from the block (spaces and line breaks included); must occur exactly once",
  },
  new_str: {
    type: "string",
    required: true,
    description: "Text to put in its place; an empty string deletes old_str",
  },
  key: {
    type: "string",
    description:
      "For a skill collection (keyed entries): the key of the entry to edit, as the block lists it (load the entry first to see its text). Omit for a plain block.",
  },
} as const satisfies FieldTable;

export type EditContextInput = InputOf<typeof EDIT_CONTEXT_FIELDS>;

/**
 * `edit_context`: replaces one exact occurrence of `old_str` in a writable block, so fixing one line of a
 * long block costs that line, not the whole block. No insert-at-line: the prompt shows no line numbers, so
 * a model would have to count lines; an `old_str` anchor (the line before, written back with the new line
 * after it) says the same thing without counting, and `set_context` append adds at the end.
 */
export function editContextTool(
  host: ToolHost,
  maxContentLength: number,
  editEntries: boolean,
): ContextToolSpec | null {
  const configs = host.getConfigs();
  const plain = configs
    .filter((config) => config.kind === "writable" && config.writable)
    .map((config) => config.label);
  // Keyed blocks whose entries can be read back and written: skill collections with set(key, …).
  const keyed = configs
    .filter((config) => config.kind === "loadable" && config.writable)
    .map((config) => config.label);
  // Without a plain writable block, entries are editable only on request (`editEntries`).
  if (plain.length === 0 && (!editEntries || keyed.length === 0)) return null;
  const labels = [...plain, ...keyed];
  const known = configs.map((config) => config.label);
  const { key, ...whole } = EDIT_CONTEXT_FIELDS;
  const fields: FieldTable =
    keyed.length === 0
      ? { ...whole, label: { ...whole.label, enum: labels } }
      : { ...whole, label: { ...whole.label, enum: labels }, key };
  const keyedNote =
    keyed.length === 0
      ? ""
      : ` To edit one entry of a skill collection (${quoteLabels(keyed)}), also pass its key.`;
  const blockList = plain.length === 0 ? "" : ` Editable blocks: ${quoteLabels(plain)}.`;
  return {
    name: "edit_context",
    description: `Edit a writable context block in place: replace one exact occurrence of old_str with new_str (an empty new_str deletes it). old_str must occur exactly once in the block's current text; if it occurs 0 or several times nothing changes and the error says how many, so add surrounding text and retry. Use it to fix or remove part of a block without rewriting the whole block with set_context.${blockList}${keyedNote}`,
    inputSchema: inputSchema(fields),
    execute: (input, call) =>
      toolOutcome(async () => {
        const args = readInput("edit_context", fields, input) as EditContextInput;
        const label = checkToolLabel(
          args.label,
          labels,
          known,
          "editable",
          () => "not a plain writable block",
        );
        const length = args.old_str.length + args.new_str.length;
        if (length > maxContentLength) {
          throw new ContextError(
            "INVALID_INPUT",
            `edit_context: old_str and new_str are ${length} characters; the limit is ${maxContentLength}`,
            { label },
          );
        }
        const source = { source: toolSource("edit_context", call) };
        if (keyed.includes(label)) {
          if (args.key === undefined || args.key.length === 0) {
            throw new ContextError(
              "INVALID_INPUT",
              `Block "${label}" holds keyed entries: pass the key of the entry to edit`,
              { label },
            );
          }
          const block = await host.editEntry(label, args.key, args.old_str, args.new_str, source);
          return `Edited ${label} entry "${args.key}". Usage: ${usageOf(block)}`;
        }
        if (args.key !== undefined) {
          throw new ContextError(
            "INVALID_INPUT",
            `Block "${label}" is a plain block with no entries: omit key`,
            { label },
          );
        }
        const block = await host.editBlock(label, args.old_str, args.new_str, source);
        return `Edited ${label}. Usage: ${usageOf(block)}`;
      }),
  };
}
