/**
 * Deterministic synthetic knowledge: runbook-style notes about made-up services. The same seed gives the same
 * entries on every machine and in workerd, so both systems index identical text.
 */

const SERVICES = [
  "billing",
  "auth",
  "search",
  "ingest",
  "notifications",
  "checkout",
  "inventory",
  "analytics",
  "gateway",
  "scheduler",
  "exports",
  "media",
  "profiles",
  "ledger",
  "webhooks",
  "reporting",
  "catalog",
  "pricing",
  "sessions",
  "audit",
  "mailer",
  "geocoder",
  "recommendations",
  "fraud",
] as const;

const COMPONENTS = [
  "database",
  "queue",
  "cache",
  "cron job",
  "worker pool",
  "API keys",
  "TLS certificates",
  "feature flags",
  "read replica",
  "dashboards",
  "alerts",
  "backups",
  "rate limiter",
  "schema migrations",
  "connection pool",
  "object storage bucket",
] as const;

const ACTIONS = [
  ["rotate", "rotating"],
  ["restart", "restarting"],
  ["scale up", "scaling up"],
  ["drain", "draining"],
  ["restore", "restoring"],
  ["migrate", "migrating"],
  ["debug", "debugging"],
  ["reindex", "reindexing"],
  ["roll back", "rolling back"],
  ["pause", "pausing"],
  ["upgrade", "upgrading"],
  ["audit", "auditing"],
] as const;

const TEAMS = ["Payments", "Identity", "Platform", "Growth", "Data", "Storefront", "Reliability", "Trust"];

const DETAILS = [
  "Check the {service} {component} dashboard first; a latency spike above 400 ms usually means the pool is saturated.",
  "The {service} service caches the old value for ten minutes, so expect stale reads until the cache expires.",
  "Never {action} the {component} during the nightly batch window between 01:00 and 03:00 UTC.",
  "Page the on-call engineer in #{team}-oncall before touching production; staging can be changed freely.",
  "The runbook script lives in tools/{service}/{component}.sh and prints a dry-run plan unless passed --apply.",
  "After {actioning} the {component}, watch the error budget for thirty minutes and post a note in the incident channel.",
  "Customers on the enterprise plan get a maintenance notice 48 hours ahead; use the {service} status page template.",
  "If the health check keeps failing, compare the {component} configuration with the last known good revision in git.",
  "Writes are replicated to the second region within five seconds; reads after a failover may miss the newest rows.",
  "Budget owner: {team}. Cost alerts fire when the monthly spend on the {component} passes 120% of forecast.",
] as const;

/** A small seeded generator (mulberry32): the same seed, the same sequence, everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

export interface KnowledgeEntry {
  key: string;
  title: string;
  content: string;
  /** The words the entry is about: a keyword query made of them finds it in any full-text index. */
  topic: { action: string; service: string; component: string };
}

/** Entry `index` of the corpus (about 80 to 110 tokens), independent of how many are generated. */
export function knowledgeEntry(index: number): KnowledgeEntry {
  const random = seededRandom(index * 7919 + 17);
  const service = pick(random, SERVICES);
  const component = pick(random, COMPONENTS);
  const [action, actioning] = pick(random, ACTIONS);
  const team = pick(random, TEAMS);
  const fill = (template: string) =>
    template
      .replaceAll("{service}", service)
      .replaceAll("{component}", component)
      .replaceAll("{actioning}", actioning)
      .replaceAll("{action}", action)
      .replaceAll("{team}", team.toLowerCase());
  const first = Math.floor(random() * DETAILS.length);
  const second = (first + 1 + Math.floor(random() * (DETAILS.length - 1))) % DETAILS.length;
  const title = `How to ${action} the ${service} ${component} (${index})`;
  const reviewed = `2026-${String(1 + Math.floor(random() * 12)).padStart(2, "0")}-${String(1 + Math.floor(random() * 28)).padStart(2, "0")}`;
  const content = [
    `${title}.`,
    `To ${action} the ${service} ${component}, follow the steps owned by team ${team}.`,
    fill(DETAILS[first]!),
    fill(DETAILS[second]!),
    `Last reviewed ${reviewed}.`,
  ].join(" ");
  return { key: `note-${index}`, title, content, topic: { action, service, component } };
}

/** Entries `0 … count-1`. */
export function knowledgeEntries(count: number, start = 0): KnowledgeEntry[] {
  return Array.from({ length: count }, (_, offset) => knowledgeEntry(start + offset));
}

/** Search queries over the corpus: keyword lookups and natural-language questions. */
export const KNOWLEDGE_QUERIES: readonly string[] = [
  "billing database rotate",
  "how do we restart the auth cache",
  "search reindex queue",
  "what should I check before scaling up the checkout worker pool?",
  "ledger backups restore",
  "nightly batch window",
];
