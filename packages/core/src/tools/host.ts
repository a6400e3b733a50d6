import type { ResolvedConfig } from "../config.js";
import type { ContextBlock, WriteSource } from "../types.js";

/** Where a write came from. */
export interface WriteOptions {
  source?: WriteSource;
}

/** What the tools need from their context: the configuration and the block operations, not the class. */
export interface ToolHost {
  getConfigs(): readonly ResolvedConfig[];
  setBlock(label: string, content: string, options?: WriteOptions): Promise<ContextBlock>;
  appendToBlock(label: string, content: string, options?: WriteOptions): Promise<ContextBlock>;
  editBlock(label: string, oldStr: string, newStr: string, options?: WriteOptions): Promise<ContextBlock>;
  editEntry(
    label: string,
    key: string,
    oldStr: string,
    newStr: string,
    options?: WriteOptions,
  ): Promise<ContextBlock>;
  setEntry(
    label: string,
    key: string,
    content: string,
    description?: string,
    options?: WriteOptions,
  ): Promise<ContextBlock>;
  search(label: string, query: string): Promise<string | null>;
  loadEntry(label: string, key: string): Promise<string | null>;
  unloadEntry(label: string, key: string): boolean;
}
