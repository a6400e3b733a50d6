/**
 * Entry points the linear-time guard (linear-time.test.ts) calls in a worker thread: each takes one text and
 * sends it through every path of core that reads user, model or stored text.
 */

import { detectDrift } from "../src/drift.js";
import { entryKey, estimateTokens, parseSections, renderPrompt } from "../src/index.js";
import { rank } from "../src/memory/text-search.js";
import { renderHeader } from "../src/prompt-format.js";
import { renderReminder } from "../src/reminder.js";
import { neutralizeContent } from "../src/render.js";
import { SECTION_RULE } from "../src/store-kit.js";
import type { ContextBlock } from "../src/types.js";

export function structureRule(text: string): void {
  neutralizeContent(text);
}

/** Render a block holding the text, parse it back, compare it for drift and reminders. */
export function renderAndParse(text: string): void {
  const block: ContextBlock = {
    label: "notes",
    description: "Notes",
    content: text,
    tokens: 1,
    maxTokens: 100,
    kind: "writable",
    whenChanged: "wait",
    writable: true,
    isSearchable: false,
    isSkill: false,
  };
  const prompt = renderPrompt([block]);
  parseSections(prompt);
  parseSections(text);
  detectDrift(prompt, [
    { label: "notes", description: "Notes", maxTokens: 100, kind: "writable", whenChanged: "wait" },
  ]);
  detectDrift(text, []);
  renderReminder(prompt, [{ ...block, content: `${text}!` }]);
  renderReminder(text, [block]);
}

/** The text as a description: rendered in a header, compared for drift. */
export function describeBlock(text: string): void {
  const expected = {
    label: "notes",
    description: text,
    maxTokens: 100,
    kind: "writable",
    whenChanged: "wait",
  } as const;
  const header = renderHeader({ ...expected, tokens: 1 });
  detectDrift(`${SECTION_RULE}\n${header}\n${SECTION_RULE}\n`, [expected]);
}

/** Keys, token estimates and the in-memory search (text as content, as title and as query). */
export function keysTokensAndSearch(text: string): void {
  entryKey(text, text);
  entryKey(undefined, text);
  estimateTokens(text);
  rank([{ key: "a", content: text }], text, 5);
  rank([{ key: "a", content: "plain words here" }], text, 5);
}
