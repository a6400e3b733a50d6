import {
  type ContextBlock,
  type ContextConfig,
  ContextError,
  ContextBlocks as CoreContextBlocks,
} from "@contextblocks/core";
import type { ToolSet } from "ai";
import { agentsAppendText } from "./agents-append.js";

/** The options core's writes take (who wrote). */
type WriteOptions = Parameters<CoreContextBlocks["setBlock"]>[2];

import { agentsTools, type UnloadCallback } from "./tools.js";

/**
 * Cloudflare agents' `ContextBlocks` (agents@0.22.0, `agents/experimental/memory/session`) on contextblocks:
 * core's `ContextBlocks` plus the methods agents has under other names.
 *
 * - `tools()` resolves to AI SDK tools whose results are text (`contextTools` from `@contextblocks/ai`
 *   resolves to a `ToolOutcome`).
 * - `toSystemPrompt()` is synchronous, as agents': it answers the snapshot taken by `load()`, or the prompt
 *   of the last `freezeSystemPrompt()` / `refreshSystemPrompt()`.
 * - `loadSkill`, `unloadSkill`, `getLoadedSkillKeys`, `restoreLoadedSkills`, `clearSkillState`,
 *   `setUnloadCallback`, `setSkill`, `setSearchEntry`, `searchContext`, `isLoaded`.
 * - As agents', the first write, `addBlock`, `tools()`, `reminder()`, skill or search call runs `load()`
 *   (refused or not), so `getBlock` and `toSystemPrompt()` answer afterwards; an append puts agents' line
 *   break after text that ends with one.
 */
export class ContextBlocks extends CoreContextBlocks {
  #onUnload: UnloadCallback | undefined;
  #prompt: string | null = null;
  #loaded = false;

  /**
   * Reads every block and takes the snapshot `toSystemPrompt()` answers (the stored prompt when it is
   * current, else a rendering of what was just read; nothing is stored, as agents' `load()`).
   */
  override async load(): Promise<void> {
    await super.load();
    this.#loaded = true;
    this.#prompt ??= await this.previewSystemPrompt();
  }

  isLoaded(): boolean {
    return this.#loaded;
  }

  /** agents' `if (!this.loaded) await this.load()`, at the start of each method below. */
  async #loadOnce(): Promise<void> {
    if (!this.#loaded) await this.load();
  }

  override async addBlock(config: ContextConfig): Promise<ContextBlock> {
    await this.#loadOnce();
    return super.addBlock(config);
  }

  override async setBlock(label: string, content: string, options?: WriteOptions): Promise<ContextBlock> {
    await this.#loadOnce();
    return super.setBlock(label, content, options);
  }

  override async appendToBlock(
    label: string,
    content: string,
    options?: WriteOptions,
  ): Promise<ContextBlock> {
    await this.#loadOnce();
    return super.appendToBlock(label, agentsAppendText(this, label, content), options);
  }

  override async reminder(options?: { sending?: boolean }): Promise<string | null> {
    await this.#loadOnce();
    return super.reminder(options);
  }

  override async freezeSystemPrompt(): Promise<string> {
    this.#prompt = await super.freezeSystemPrompt();
    return this.#prompt;
  }

  override async refreshSystemPrompt(): Promise<string> {
    this.#prompt = await super.refreshSystemPrompt();
    return this.#prompt;
  }

  /** The frozen prompt, synchronously; before `load()` (or a freeze) it throws, as agents' does. */
  toSystemPrompt(): string {
    if (this.#prompt === null) {
      throw new ContextError(
        "UNSUPPORTED",
        "Context blocks not loaded. Call load() first (or use `await freezeSystemPrompt()`).",
      );
    }
    return this.#prompt;
  }

  /**
   * agents' synchronous re-render: the prompt of the blocks as this instance holds them (what `load()` read
   * and every write since), taken as the new snapshot. Nothing is read or stored; `await
   * refreshSystemPrompt()` re-reads the providers and stores the prompt.
   */
  refreshSnapshot(): string {
    this.#prompt = this.render();
    return this.#prompt;
  }

  /** AI SDK tools (`set_context`, `search_context`, `load_context`, `unload_context`) whose results are text. */
  async tools(): Promise<ToolSet> {
    await this.#loadOnce();
    return agentsTools(this, (label, key) => this.#onUnload?.(label, key));
  }

  /** Called with (label, key) after an entry was unloaded (the `unload_context` tool or `unloadSkill`). */
  setUnloadCallback(callback: UnloadCallback | null): void {
    this.#onUnload = callback ?? undefined;
  }

  /** agents' name for `loadEntry`. */
  async loadSkill(label: string, key: string): Promise<string | null> {
    await this.#loadOnce();
    return this.loadEntry(label, key);
  }

  /** Marks a skill unloaded and tells the unload callback; false when it was not loaded. */
  unloadSkill(label: string, key: string): boolean {
    if (!this.unloadEntry(label, key)) return false;
    this.#onUnload?.(label, key);
    return true;
  }

  /** The loaded skills as `label:key`. A fresh set (agents returns its live set). */
  getLoadedSkillKeys(): Set<string> {
    return new Set(this.loadedEntries().map((entry) => `${entry.label}:${entry.key}`));
  }

  /** Replaces what is tracked as loaded with these `label:key` strings (entries of loadable blocks only). */
  restoreLoadedSkills(skillIds: Iterable<string>): void {
    this.clearSkillState();
    for (const id of skillIds) {
      const split = id.indexOf(":");
      if (split > 0) this.restoreLoadedEntry(id.slice(0, split), id.slice(split + 1));
    }
  }

  clearSkillState(): void {
    for (const entry of this.loadedEntries()) this.unloadEntry(entry.label, entry.key);
  }

  /** agents' name for `setEntry` on a skill block. */
  async setSkill(label: string, key: string, content: string, description?: string): Promise<void> {
    await this.#loadOnce();
    await this.setEntry(label, key, content, description);
  }

  /** agents' name for `setEntry` on a searchable block. */
  async setSearchEntry(label: string, key: string, content: string): Promise<void> {
    await this.#loadOnce();
    await this.setEntry(label, key, content);
  }

  /** agents' name for `search`. */
  async searchContext(label: string, query: string): Promise<string | null> {
    await this.#loadOnce();
    return this.search(label, query);
  }
}
