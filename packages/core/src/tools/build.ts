import { editContextTool } from "./edit-context.js";
import type { ToolHost } from "./host.js";
import { loadContextTool, unloadContextTool } from "./load-context.js";
import { searchContextTool } from "./search-context.js";
import { setContextTool } from "./set-context.js";
import { type ContextToolSpec, DEFAULT_MAX_TOOL_CONTENT_LENGTH, type ToolOptions } from "./spec.js";

/** The tools the blocks allow, in a fixed order. Only read-only blocks: none. */
export function buildToolSpecs(host: ToolHost, options: ToolOptions = {}): ContextToolSpec[] {
  const maxContentLength = options.maxToolContentLength ?? DEFAULT_MAX_TOOL_CONTENT_LENGTH;
  return [
    setContextTool(host, maxContentLength),
    editContextTool(host, maxContentLength, options.editEntries ?? false),
    searchContextTool(host),
    loadContextTool(host),
    unloadContextTool(host),
  ].filter((tool): tool is ContextToolSpec => tool !== null);
}
