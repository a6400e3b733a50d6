import type { BlockKind, JsonSchema, WhenChanged } from "@contextblocks/core";
import type { CompactionView, TreeNodeView } from "@contextblocks/inspector";

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
  /** False when the block changed after the prompt was frozen (it travels as a reminder until the next refresh puts it in the prompt). */
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
  id: string;
  role: string;
  text: string;
  /** A compaction's summary standing in for the messages it covers. */
  summary: boolean;
}

/** The message tree and overlays, as `@contextblocks/inspector`'s `readTree` reads them. */
export type { CompactionView, TreeNodeView };

/** A conversation of the agent's `SessionManager`. */
export interface SessionView {
  id: string;
  name: string;
  /** The conversation turns go to when no `session` is named: the one most recently written to. */
  current: boolean;
  createdAt: string;
  updatedAt: string;
  /** Messages on the active path (stored, before overlays). */
  pathLength: number;
  /** Messages stored in the tree, every branch. */
  storedMessages: number;
  inputTokens: number;
  outputTokens: number;
  tree: TreeNodeView[];
  compactions: CompactionView[];
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
  /** The current conversation as the next turn sends it: overlays applied, the newest messages. */
  transcript: { session: string | null; count: number; recent: TranscriptLine[] };
  /** Compaction settings: the threshold (tokens of prompt plus history) and what is kept. */
  compaction: { afterTokens: number; protectHead: number; tailTokenBudget: number; historyTokens: number };
  /** Every conversation, most recently written first. */
  sessions: SessionView[];
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
  /** sha256 of the system prompt this turn sent. */
  promptSha256: string;
  /** Messages on the conversation's active path after the turn. */
  transcriptLength: number;
  session: { id: string; name: string };
  /** The user's message of this turn: the first it stored. */
  userMessageId: string;
  /** The answer: the last message the turn stored. */
  assistantMessageId: string;
  /** Every message the turn stored, oldest first: one per model call after the user's (a tool step, the answer). */
  storedMessageIds: string[];
  /** The parent the user's message was stored under (`null`: a new root). */
  parentId: string | null;
  /** The ids of the messages the model got, oldest first, the new user message last. */
  sentMessageIds: string[];
  /** Estimated tokens of prompt plus history after the turn, against `compactAfterTokens`. */
  historyTokens: number;
  compactAfterTokens: number;
  /** The compaction the session ran after this turn was stored, and the prompt it refreshed. */
  compaction: { fromMessageId: string; toMessageId: string; summary: string; promptSha256: string } | null;
  /** A compaction that failed (the turn is stored all the same). */
  compactionError: string | null;
}

/** A request the Durable Object turns down after looking (an unknown session or message). */
export interface Refusal {
  refused: { status: 400 | 404; error: string };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "refused" in value;
}

/** `POST /agents/:id/sessions`. */
export interface CreatedSession {
  agent: string;
  session: { id: string; name: string };
}

export interface RefreshResult {
  agent: string;
  prompt: string;
  promptSha256: string;
  previousSha256: string;
  changed: boolean;
  reminder: string | null;
}
