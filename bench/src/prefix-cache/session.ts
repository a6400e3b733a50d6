/**
 * The scripted session the prefix-cache benchmark replays against every system: the blocks' starting
 * content, what the user says each turn, which tool the model calls, and what it answers. Everything is
 * deterministic, so each system receives the same conversation and only the prompt handling differs.
 */
import { knowledgeEntry, seededRandom } from "../corpus.js";

/** The agent's persona: a read-only block of a few hundred tokens. */
export const SOUL = `You are Atlas, the engineering assistant of a mid-sized software company. You help the on-call
engineers and the platform team keep production healthy: you read runbooks, explain what a dashboard shows,
draft incident notes, and suggest the next safe step. You are careful, concrete and brief.

How you work:
- Prefer the team's runbooks over general advice. When a question touches a service, search the knowledge
  block first and cite the note you used by its key.
- Never invent commands, hostnames or flags. If a runbook does not cover something, say so and propose how
  to find out (a dashboard, a log query, the owning team's channel).
- Production changes need a second pair of eyes. Offer a dry run first, state the blast radius, and say how
  to roll back before you say how to roll forward.
- Keep the user's preferences in mind (see the memory block) and record new durable facts about them or
  about the systems with the set_context tool: one short line per fact, no secrets, no one-off details.
- When the environment block changes during the conversation, trust the newest value.

Style:
- Lead with the answer, then the reasoning. Use short paragraphs or a numbered list of steps.
- Quote exact error messages and metric names in backticks. Give times in UTC.
- When you are unsure, give your confidence and what would change your mind.
- Do not apologise for limitations; state them and move on.

Tools:
- search_context finds runbooks and notes in the knowledge block; search with the service and component
  names the user mentions, then read the matching notes before answering.
- set_context records durable facts in memory (append one line) and indexes new notes in the knowledge
  block (give each note a title so later edits replace it instead of adding a copy).

Escalation: anything that risks customer data, payments or security goes to the owning team's on-call
engineer before any change, even when a runbook seems to allow it. Incidents rated SEV-1 or SEV-2 get an
incident channel and a scribe; remind the user of that when the impact is customer-visible.`;

/** The memory block's content at the start of the session. */
export const MEMORY_START = [
  "User: Priya, staff engineer on the Platform team, based in Berlin (UTC+2 in summer).",
  "Prefers pnpm over npm, and terse answers with commands she can paste.",
  "Is on call this week for gateway, scheduler and webhooks.",
  "Uses the staging cluster `stg-eu-1` for dry runs.",
  "Her manager is Jonas (Platform lead); weekly sync on Tuesdays 10:00 UTC.",
  "The team's incident channel is #platform-incidents; status updates go out every 30 minutes.",
  "Deploys go through the `release` pipeline; production needs an approval from a second engineer.",
  "Runs Grafana dashboards `platform-overview` and `gateway-latency` on a second screen.",
].join("\n");

/** Facts the model appends to memory through `set_context`, one per memory write. */
const MEMORY_FACTS = [
  "Wants incident notes drafted in the team's template: impact, timeline, cause, follow-ups.",
  "Owns the migration of the scheduler cron jobs to the new queue (target: end of quarter).",
  "Dislikes force-pushes to shared branches; always suggests a revert commit instead.",
  "Gateway rate limits were raised to 1,200 rps for the enterprise tenant on request of Growth.",
  "Reviews database migrations with Tomasz from the Data team before applying them.",
  "Prefers dashboards in Grafana over raw PromQL in chat.",
  "Has read-only access to the ledger database; writes go through the Payments on-call engineer.",
  "Next planned game day: failover of the sessions cache to the second region.",
  "Keeps a personal checklist in docs/oncall/priya.md.",
  "Wants reminders of maintenance windows 24 hours ahead.",
];

/** The environment block (read-only, `whenChanged: "remind"`): the date rolls over once in the session. */
export function environmentValue(day: 1 | 2): string {
  return [
    `Date: 2026-06-${day === 1 ? "29" : "30"} (UTC)`,
    "Region: eu-west, cluster prod-eu-2",
    `Open incidents: ${day === 1 ? "none" : "INC-4411 (SEV-3, webhooks retries)"}`,
    "Deploy freeze: no",
  ].join("\n");
}

/** Entries indexed in the knowledge block before the session starts. */
export const KNOWLEDGE_PRELOAD = 300;

export type ScriptedToolCall =
  | { toolName: "search_context"; input: { label: "knowledge"; query: string } }
  | { toolName: "set_context"; input: { label: "memory"; content: string; action: "append" } }
  | {
      toolName: "set_context";
      input: { label: "knowledge"; content: string; metadata: { title: string } };
    };

export interface ScriptedTurn {
  /** 1-based. */
  number: number;
  user: string;
  /** The model's tool call before its answer, if any (the tool result is whatever the system returns). */
  toolCall?: ScriptedToolCall;
  reply: string;
}

export interface ScriptedSession {
  turns: ScriptedTurn[];
  /** The environment block changes before this turn. */
  environmentChangeBefore: number;
  /** The host compacts the transcript (and refreshes the prompt) before this turn. */
  compactionBefore: number;
  /** The message pair that replaces the transcript at compaction. */
  compactionSummary: string;
}

const SERVICES = ["gateway", "scheduler", "webhooks", "billing", "auth", "search", "checkout", "ledger"];
const COMPONENTS = ["queue", "cache", "worker pool", "database", "alerts", "rate limiter", "backups"];

const QUESTIONS = [
  "The {service} {component} looks unhappy since the last deploy. What should I check first?",
  "Can you explain what the p99 panel on the {service} dashboard is telling me right now?",
  "Draft a two-line status update for the {service} incident channel, please.",
  "Is it safe to restart the {service} {component} during business hours?",
  "What is the rollback plan if the {service} {component} change goes wrong?",
  "Remind me who owns the {service} {component} and how to reach them.",
  "We got paged for {service} again. Is this the same pattern as yesterday?",
  "Give me the dry-run command for the {service} {component} runbook.",
  "How long does a failover of the {service} {component} usually take?",
  "Summarise what we know so far about the {service} {component} errors.",
];

const LOG_LINES = [
  "2026-06-29T09:14:02Z ERROR {service} upstream timed out after 30000ms (attempt 3/3) request_id=7f3a",
  "2026-06-29T09:14:05Z WARN  {service} {component} saturation 97% (threshold 90%) pool=primary",
  "2026-06-29T09:14:09Z ERROR {service} failed to acquire connection: too many clients already",
  "2026-06-29T09:14:11Z INFO  {service} circuit breaker opened for dependency {component}",
  "2026-06-29T09:14:40Z WARN  {service} retry queue depth 18,204 and growing",
];

const REPLY_SENTENCES = [
  "Start with the {service} {component} dashboard: if saturation is above 90%, the deploy is a red herring.",
  "The runbook says to drain traffic from one zone at a time, so the blast radius stays at a third of requests.",
  "I would not restart it yet; the error rate is flat, and a restart drops the warm cache for ten minutes.",
  "The owning team is on call in their channel; page them if customer-visible impact lasts longer than 15 minutes.",
  "Roll back with a revert commit and a normal deploy, not a force-push; the pipeline takes about eight minutes.",
  "Confidence is medium: the symptoms match the pool exhaustion from last week, but the retry queue is new.",
  "Run the dry run on `stg-eu-1` first and compare the plan with production before passing `--apply`.",
  "Write down the timeline as you go; it makes the incident note much easier to finish afterwards.",
  "If the queue depth keeps growing after the fix, scale the worker pool before touching the database.",
  "That matches the alert threshold change from last month, so the page may be noise rather than a regression.",
];

function fill(template: string, service: string, component: string): string {
  return template.replaceAll("{service}", service).replaceAll("{component}", component);
}

/**
 * A session of `turnCount` turns. Every turn ≡ 2 (mod 6) searches the knowledge block, every turn ≡ 3
 * (mod 6) appends a fact to memory, turns 5, 17, 29, 41 … index a new note; the environment changes before
 * turn ⌈0.3 n⌉ and the transcript is compacted before turn ⌊n/2⌋ + 1.
 */
export function scriptedSession(turnCount: number): ScriptedSession {
  const random = seededRandom(2026);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const turns: ScriptedTurn[] = [];
  let memoryWrites = 0;
  for (let number = 1; number <= turnCount; number += 1) {
    const service = pick(SERVICES);
    const component = pick(COMPONENTS);
    let user = fill(pick(QUESTIONS), service, component);
    if (number % 7 === 4) {
      // Now and then the user pastes a log excerpt.
      user += `\n\n\`\`\`\n${LOG_LINES.map((line) => fill(line, service, component)).join("\n")}\n\`\`\``;
    }
    const sentenceCount = 2 + Math.floor(random() * 4);
    const reply = Array.from({ length: sentenceCount }, () =>
      fill(pick(REPLY_SENTENCES), service, component),
    );
    let toolCall: ScriptedToolCall | undefined;
    if (number % 6 === 2) {
      // A keyword query made of a preloaded note's topic, so every system's index finds something.
      const { topic } = knowledgeEntry(Math.floor(random() * KNOWLEDGE_PRELOAD));
      toolCall = {
        toolName: "search_context",
        input: { label: "knowledge", query: `${topic.action} ${topic.service} ${topic.component}` },
      };
    } else if (number % 6 === 3) {
      const fact = MEMORY_FACTS[memoryWrites % MEMORY_FACTS.length]!;
      memoryWrites += 1;
      toolCall = { toolName: "set_context", input: { label: "memory", content: fact, action: "append" } };
      reply.unshift("Noted, I have added that to memory.");
    } else if (number % 12 === 5) {
      const note = knowledgeEntry(1_000_000 + number);
      toolCall = {
        toolName: "set_context",
        input: { label: "knowledge", content: note.content, metadata: { title: note.title } },
      };
      reply.unshift("I have indexed that as a new note in the knowledge block.");
    }
    turns.push({ number, user, ...(toolCall ? { toolCall } : {}), reply: reply.join(" ") });
  }
  return {
    turns,
    environmentChangeBefore: Math.max(2, Math.ceil(turnCount * 0.3)),
    compactionBefore: Math.floor(turnCount / 2) + 1,
    compactionSummary: [
      "Summary of the conversation so far (the earlier messages were compacted):",
      "- Priya is on call for gateway, scheduler and webhooks; we looked at saturation of several worker pools",
      "  and queues after the morning deploy and agreed that the deploy itself was not the cause.",
      "- We searched the runbooks for restart, failover and rollback steps and used the dry runs on stg-eu-1.",
      "- New facts were recorded in memory and two new notes were indexed in the knowledge block.",
      "- Open threads: the webhooks retry queue (INC-4411), and the scheduler cron migration plan.",
    ].join("\n"),
  };
}
