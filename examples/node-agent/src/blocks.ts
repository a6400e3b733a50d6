import type { ContextConfig, SearchProvider } from "@contextblocks/core";

/** The block labels, in prompt order: the same agent as examples/worker-agent. */
export const LABELS = {
  soul: "soul",
  memory: "memory",
  knowledge: "knowledge",
  environment: "environment",
} as const;

export const MEMORY_MAX_TOKENS = 600;

export const SOUL = [
  "You are Ada, a concise assistant for people learning contextblocks.",
  "Answer in a few sentences.",
  "When the user tells you something worth keeping, write it to the memory block with set_context.",
  "When the knowledge block may hold the answer, search it with search_context first.",
].join("\n");

/** What the knowledge block holds when the database is new. */
export const KNOWLEDGE_SEED: readonly { title: string; content: string }[] = [
  {
    title: "Running the tests",
    content:
      "Run pnpm test at the repository root to test every package, or pnpm --filter node-agent test for this example: it opens a temporary better-sqlite3 file, closes it and opens it again like a cold start.",
  },
  {
    title: "Frozen system prompt",
    content:
      "The system prompt is rendered once and stored under _system_prompt, so every turn and every restart sends the same bytes and the model provider's prefix cache stays warm. A refresh rebuilds it on purpose.",
  },
  {
    title: "Reminders",
    content:
      'A block marked whenChanged: "remind", such as the environment date, that changes after the prompt was frozen is sent as a reminder at the end of the newest user message instead of changing the system prompt.',
  },
  {
    title: "Where the data lives",
    content:
      "Everything is in one SQLite file: writable blocks and the frozen prompt in cf_agents_context_blocks, knowledge entries in an FTS5 full-text index, and the conversation as a message tree in assistant_messages (a Session on sqliteBackend).",
  },
];

/** The agent's blocks. `memory` has no provider: the default provider stores it in SQLite by label. */
export function agentBlocks(knowledge: SearchProvider, today: () => string): ContextConfig[] {
  return [
    { label: LABELS.soul, provider: { get: async () => SOUL } },
    { label: LABELS.memory, description: "Facts learned about the user", maxTokens: MEMORY_MAX_TOKENS },
    { label: LABELS.knowledge, description: "Notes about contextblocks; search them", provider: knowledge },
    {
      label: LABELS.environment,
      description: "Today's date",
      whenChanged: "remind",
      provider: { get: async () => `Today is ${today()}.` },
    },
  ];
}
