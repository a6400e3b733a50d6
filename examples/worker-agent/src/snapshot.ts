import type { BlockKind, JsonSchema, WhenChanged } from "@contextblocks/core";

/** One block as `GET /agents/:id/blocks` and the inspector show it. */
export interface BlockView {
  label: string;
  description?: string;
  /** Also its marker in the prompt: `[readonly]`, `[writable]`, `[loadable]` or `[searchable]`. */
  kind: BlockKind;
  whenChanged: WhenChanged;
  /** Current content in storage (a searchable block's summary). */
  content: string;
  tokens: number;
  maxTokens?: number;
  usagePercent?: number;
  writable: boolean;
  /** False when the block changed after the prompt was frozen (it reaches the prompt at the next refresh). */
  matchesFrozenPrompt: boolean;
  /** Loadable blocks: the keys loaded in the conversation and not unloaded since, in load order. */
  loaded?: string[];
}

export interface ToolView {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface TranscriptLine {
  role: string;
  text: string;
}

export interface AgentSnapshot {
  agent: string;
  /** `scripted-offline` or `openai:<model>`. */
  model: string;
  offline: boolean;
  date: { today: string; override: string | null };
  prompt: string;
  promptSha256: string;
  promptTokens: number;
  /** What the next turn attaches to the user's message, or `null`. */
  reminder: string | null;
  blocks: BlockView[];
  tools: ToolView[];
  transcript: { count: number; recent: TranscriptLine[] };
}

export interface ToolCallView {
  tool: string;
  input: unknown;
  /** The text the model read. */
  output: string;
  /** The tool failed (core's outcome, not a guess from the text). */
  isError: boolean;
}

export interface ChatResult {
  agent: string;
  model: string;
  offline: boolean;
  /** Present when the offline scripted model answered. */
  note?: string;
  reply: string;
  toolCalls: ToolCallView[];
  /** The reminder this turn attached to the user's message, or `null`. */
  reminder: string | null;
  /** True when the request's system prompt was the frozen prompt, byte for byte. */
  systemIsFrozenPrompt: boolean;
  promptSha256: string;
  transcriptLength: number;
}

export interface RefreshResult {
  agent: string;
  prompt: string;
  promptSha256: string;
  previousSha256: string;
  changed: boolean;
  reminder: string | null;
}
