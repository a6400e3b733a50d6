import type { ContextBlocks } from "../context-blocks.js";
import { loadContextTool, unloadContextTool } from "./load-context.js";
import { searchContextTool } from "./search-context.js";
import { setContextTool } from "./set-context.js";
import { type ContextToolSpec, DEFAULT_MAX_TOOL_CONTENT_LENGTH, type ToolOptions } from "./spec.js";

export type { ContextToolName, ContextToolSpec, JsonSchema, ToolOptions } from "./spec.js";

/** The tools the blocks allow, in a fixed order. Only read-only blocks: none. */
export function buildToolSpecs(context: ContextBlocks, options: ToolOptions = {}): ContextToolSpec[] {
  const maxContentLength = options.maxToolContentLength ?? DEFAULT_MAX_TOOL_CONTENT_LENGTH;
  return [
    setContextTool(context, maxContentLength),
    searchContextTool(context),
    loadContextTool(context),
    unloadContextTool(context),
  ].filter((tool): tool is ContextToolSpec => tool !== null);
}
