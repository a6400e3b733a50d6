import type { ContextBlocks, ContextToolSpec } from "@contextblocks/core";
import { jsonSchema, type Tool, type ToolSet } from "ai";

/** Called after `unload_context` unloaded an entry (agents' `ContextBlocks.setUnloadCallback`). */
export type UnloadCallback = (label: string, key: string) => void;

/**
 * The context tools as Cloudflare agents' `Session.tools()` returns them: AI SDK tools whose `execute`
 * resolves to the answer text (contextblocks' `contextTools` resolves to a `ToolOutcome`, `{ isError, text }`;
 * an error reads `Error: …` here, as agents' does).
 */
export function agentsTools(context: ContextBlocks, onUnload?: UnloadCallback): ToolSet {
  const tools: Record<string, Tool> = {};
  for (const spec of context.toolSpecs()) tools[spec.name] = toTextTool(spec, onUnload);
  return tools;
}

function toTextTool(spec: ContextToolSpec, onUnload: UnloadCallback | undefined): Tool {
  return {
    description: spec.description,
    inputSchema: jsonSchema(spec.inputSchema as Parameters<typeof jsonSchema>[0]),
    execute: async (input: unknown) => {
      const outcome = await spec.execute(input);
      if (spec.name === "unload_context" && !outcome.isError && onUnload !== undefined) {
        const { label, key } = (input ?? {}) as { label?: unknown; key?: unknown };
        if (typeof label === "string" && typeof key === "string") onUnload(label, key);
      }
      return outcome.text;
    },
  } as Tool;
}
