import { type ContextTool, contextTools } from "@contextblocks/ai";
import type { ContextBlocks } from "@contextblocks/core";
import type { Tool, ToolSet } from "ai";
import { agentsAppendText } from "./agents-append.js";

/** Called after `unload_context` unloaded an entry (agents' `ContextBlocks.setUnloadCallback`). */
export type UnloadCallback = (label: string, key: string) => void;

/** What the tools call after `unload_context` unloaded an entry, awaited before the tool answers. */
type UnloadHandler = (label: string, key: string) => void | Promise<void>;

/**
 * The context tools as Cloudflare agents' `Session.tools()` returns them: AI SDK tools whose `execute`
 * resolves to the answer text (contextblocks' `contextTools` resolves to a `ToolOutcome`, `{ isError, text }`;
 * an error reads `Error: …` here, as agents' does). A successful `unload_context` awaits `onUnload` (a
 * session rewrites the stored result there) and answers agents' words, "… Context reclaimed.".
 */
export function agentsTools(context: ContextBlocks, onUnload?: UnloadHandler): ToolSet {
  const tools: Record<string, Tool> = {};
  // contextTools' tools, answering text: its input schema also keeps arguments nested too deeply for the SDK
  // to copy out of the step's messages (they threw a RangeError out of generateText).
  for (const [name, tool] of Object.entries(contextTools(context) as Record<string, ContextTool>)) {
    tools[name] = toTextTool(context, name, tool, onUnload);
  }
  return tools;
}

/** `set_context`'s input as agents' tool reads it: see `describedByTitle` and `agentsAppendText`. */
function agentsSetContext(context: ContextBlocks, input: unknown): unknown {
  const described = describedByTitle(context, input);
  if (typeof described !== "object" || described === null) return described;
  const { label, content, action } = described as { label?: unknown; content?: unknown; action?: unknown };
  if (action !== "append" || typeof label !== "string" || typeof content !== "string") return described;
  return { ...described, content: agentsAppendText(context, label, content) };
}

/**
 * As agents' `set_context`: a skill entry written with a title and no description is described by its title
 * (the skill block lists `- key: title`); a search entry keeps no description.
 */
function describedByTitle(context: ContextBlocks, input: unknown): unknown {
  if (typeof input !== "object" || input === null) return input;
  const { label, metadata } = input as { label?: unknown; metadata?: unknown };
  if (typeof metadata !== "object" || metadata === null) return input;
  const { title, description } = metadata as { title?: unknown; description?: unknown };
  if (typeof title !== "string" || description !== undefined) return input;
  const config = context.getConfigs().find((candidate) => candidate.label === label);
  if (config?.kind !== "loadable") return input;
  return { ...input, metadata: { ...metadata, description: title } };
}

function toTextTool(
  context: ContextBlocks,
  name: string,
  tool: ContextTool,
  onUnload: UnloadHandler | undefined,
): Tool {
  return {
    description: tool.description,
    inputSchema: tool.inputSchema,
    execute: async (input: unknown) => {
      const outcome = await tool.execute(name === "set_context" ? agentsSetContext(context, input) : input);
      if (name === "unload_context" && !outcome.isError && onUnload !== undefined) {
        const { label, key } = (input ?? {}) as { label?: unknown; key?: unknown };
        if (typeof label === "string" && typeof key === "string") await onUnload(label, key);
      }
      if (name === "unload_context" && !outcome.isError) return `${outcome.text} Context reclaimed.`;
      return outcome.text;
    },
  } as Tool;
}
