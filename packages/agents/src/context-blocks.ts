import { ContextError, ContextBlocks as CoreContextBlocks } from "@contextblocks/core";
import type { ToolSet } from "ai";
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
    return agentsTools(this, (label, key) => this.#onUnload?.(label, key));
  }

  /** Called with (label, key) after an entry was unloaded (the `unload_context` tool or `unloadSkill`). */
  setUnloadCallback(callback: UnloadCallback | null): void {
    this.#onUnload = callback ?? undefined;
  }

  /** agents' name for `loadEntry`. */
  loadSkill(label: string, key: string): Promise<string | null> {
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
    await this.setEntry(label, key, content, description);
  }

  /** agents' name for `setEntry` on a searchable block. */
  async setSearchEntry(label: string, key: string, content: string): Promise<void> {
    await this.setEntry(label, key, content);
  }

  /** agents' name for `search`. */
  searchContext(label: string, query: string): Promise<string | null> {
    return this.search(label, query);
  }
}
