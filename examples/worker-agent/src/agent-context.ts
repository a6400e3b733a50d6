import { ContextBlocks, type ContextConfig, entryKey, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import {
  PostgresContextProvider,
  PostgresSearchProvider,
  type PostgresSource,
} from "@contextblocks/postgres";
import { R2SkillProvider } from "@contextblocks/r2";
import { createDurableContext } from "@contextblocks/sqlite";
import { isIsoDate, todayUtc } from "./dates.js";
import type { AgentSettings } from "./settings.js";
import type { SharedBlockProvider } from "./shared-block.js";
import { SKILLS_PREFIX } from "./skills-bucket.js";

export { SKILLS_PREFIX } from "./skills-bucket.js";

/** The block labels, in prompt order. */
export const LABELS = {
  soul: "soul",
  memory: "memory",
  knowledge: "knowledge",
  skills: "skills",
  environment: "environment",
  profile: "profile",
} as const;

/** The name of the shared "user profile" block's Durable Object: every agent of this Worker reads it. */
export const PROFILE_OBJECT = "user-profile";

export const MEMORY_MAX_TOKENS = 600;

/** The settings key of the date override (see `PUT /agents/:id/date`). */
export const DATE_OVERRIDE_KEY = "date_override";
const SEEDED_KEY = "knowledge_seeded";

export const SOUL = [
  "You are Ada, a concise assistant for people learning contextblocks.",
  "Answer in a few sentences.",
  "When the user tells you something worth keeping, write it to the memory block with set_context.",
  "When the knowledge block may hold the answer, search it with search_context first.",
  "When a listed skill fits the task, load it with load_context, and unload it when you are done.",
].join("\n");

/** What the knowledge block holds on an agent's first start. */
export const KNOWLEDGE_SEED: readonly { title: string; content: string }[] = [
  {
    title: "Running the tests",
    content:
      "Run pnpm test at the repository root to test every package, or pnpm --filter worker-agent test for this example: the Durable Object tests run in workerd first, then the inspector page is checked in headless Chromium.",
  },
  {
    title: "Frozen system prompt",
    content:
      "The system prompt is rendered once and stored under _system_prompt, so every turn and every cold start sends the same bytes and the model provider's prefix cache stays warm. POST /agents/:id/refresh rebuilds it on purpose.",
  },
  {
    title: "Reminders",
    content:
      'A block marked whenChanged: "remind", such as the environment date, that changes after the prompt was frozen is sent as a reminder at the end of the newest user message instead of changing the system prompt.',
  },
  {
    title: "Where the data lives",
    content:
      "Each agent is one Durable Object with its own SQLite database: writable blocks in cf_agents_context_blocks, knowledge entries in an FTS5 full-text index, and the conversations as message trees in assistant_messages (sessions on sqliteBackend; every turn goes through contextPipeline with the session).",
  },
];

/**
 * Today's date for the environment block: the stored override (`PUT /agents/:id/date`) when one is set,
 * else the fixed date from `AGENT_DATE` when configured, else the UTC date.
 */
export function agentDate(settings: AgentSettings, fixedDate?: string): string {
  return settings.get(DATE_OVERRIDE_KEY) ?? fixedDate ?? todayUtc();
}

/** `AGENT_DATE` checked: `undefined` when empty or unset, the date when it is `YYYY-MM-DD`, else an error. */
export function fixedDateFrom(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (!isIsoDate(value.trim()))
    throw new Error(`AGENT_DATE must be a date written YYYY-MM-DD, got "${value}"`);
  return value.trim();
}

/**
 * Where the blocks live when the Worker has a Hyperdrive binding (wrangler.postgres.jsonc): a Postgres
 * client, and the namespace that keeps this agent's rows apart from every other agent's in the shared tables.
 */
export interface PostgresStore {
  readonly client: PostgresSource;
  readonly namespace: string;
}

/**
 * The agent's blocks. `memory` has no provider: `createDurableContext` stores it in SQLite by label, or,
 * with a Postgres store, the default provider stores it in Postgres. The
 * skills are shared by every agent: objects of the R2 bucket, listed in the prompt, loaded on demand.
 */
export function agentBlocks(
  storage: DurableObjectStorage,
  skillsBucket: R2Bucket,
  settings: AgentSettings,
  fixedDate?: string,
  postgres?: PostgresStore,
  profile?: SharedBlockProvider,
): ContextConfig[] {
  return [
    { label: LABELS.soul, provider: { get: async () => SOUL } },
    {
      label: LABELS.memory,
      description: "Facts learned about the user",
      maxTokens: MEMORY_MAX_TOKENS,
    },
    {
      label: LABELS.knowledge,
      description: "Notes about contextblocks; search them",
      provider:
        postgres === undefined
          ? new Fts5SearchProvider(storage, { label: LABELS.knowledge })
          : new PostgresSearchProvider(postgres.client, {
              label: LABELS.knowledge,
              namespace: postgres.namespace,
            }),
    },
    {
      label: LABELS.skills,
      description: "Skills to load with load_context",
      provider: new R2SkillProvider(skillsBucket, { prefix: SKILLS_PREFIX }),
    },
    {
      label: LABELS.environment,
      description: "Today's date",
      whenChanged: "remind",
      provider: { get: async () => `Today is ${agentDate(settings, fixedDate)}.` },
    },
    // Shared by every agent (every conversation of this user): another agent's write arrives as a reminder.
    ...(profile === undefined
      ? []
      : [
          {
            label: LABELS.profile,
            description: "The user's profile, shared by all their conversations",
            maxTokens: MEMORY_MAX_TOKENS,
            whenChanged: "remind" as const,
            provider: profile,
          },
        ]),
  ];
}

/**
 * The agent's `ContextBlocks` on the Durable Object's storage, or with a Postgres store, its blocks and
 * frozen prompt in Postgres (the transcript and settings stay in the object). Cheap to build: it reads nothing
 * until asked, and a cold start's `freezeSystemPrompt()` returns the stored prompt.
 */
export function createAgentContext(
  storage: DurableObjectStorage,
  skillsBucket: R2Bucket,
  settings: AgentSettings,
  fixedDate?: string,
  postgres?: PostgresStore,
  profile?: SharedBlockProvider,
): ContextBlocks {
  const blocks = agentBlocks(storage, skillsBucket, settings, fixedDate, postgres, profile);
  if (postgres === undefined) return createDurableContext(storage, blocks, { versions: true });
  const { client, namespace } = postgres;
  const inPostgres = (label: string): PostgresContextProvider =>
    new PostgresContextProvider(client, { label, namespace, versions: label !== SYSTEM_PROMPT_LABEL });
  return new ContextBlocks(blocks, inPostgres(SYSTEM_PROMPT_LABEL), inPostgres);
}

/** Indexes the seed entries once per agent, on its first start, before the prompt is first frozen. */
export async function seedKnowledge(context: ContextBlocks, settings: AgentSettings): Promise<void> {
  if (settings.get(SEEDED_KEY) !== null) return;
  for (const entry of KNOWLEDGE_SEED) {
    await context.setEntry(LABELS.knowledge, entryKey(entry.title, entry.content), entry.content);
  }
  settings.set(SEEDED_KEY, new Date().toISOString());
}
