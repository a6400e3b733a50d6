/**
 * The layers of the workspace and what each package's main entry may reach (DESIGN: "The layering").
 * Contracts at the bottom, storage backends side by side above them, adapters on top: a user installs the
 * contracts, one backend and, with the AI SDK, the adapter, and gets nothing else.
 */
const core = "@contextblocks/core";
const sql = "@contextblocks/sql";
const text = "@contextblocks/text";
const sessions = "@contextblocks/sessions";
const sqlStores = "@contextblocks/sql-stores";

export interface Layer {
  /** Why the package may reach what it reaches. */
  role: string;
  /** Every package the main entry may reach, transitively. */
  mayReach: readonly string[];
}

export const layers: Readonly<Record<string, Layer>> = {
  [core]: { role: "contracts: blocks, search, skills, ContextBlocks, tools, errors", mayReach: [] },
  [sql]: { role: "SQL: SqlClient and the adapters of every driver", mayReach: [] },
  [text]: { role: "text analysis: tokenizer, stemmer, stopwords, query planning", mayReach: [] },
  [sessions]: {
    role: "contracts: the message tree, Session, compaction (storage-free); its in-memory search ranks with text",
    mayReach: [core, text],
  },
  [sqlStores]: {
    role: "stores written once over SqlClient, with per-dialect statements",
    mayReach: [core, sql, text, sessions],
  },
  "@contextblocks/sqlite": { role: "backend: SQLite", mayReach: [core, sql, text, sessions, sqlStores] },
  "@contextblocks/fts5": { role: "backend: SQLite FTS5 search", mayReach: [core, sql, text] },
  "@contextblocks/postgres": { role: "backend: Postgres", mayReach: [core, sql, text, sessions, sqlStores] },
  "@contextblocks/r2": { role: "backend: R2 skills", mayReach: [core] },
  "@contextblocks/ai": {
    role: "adapter: the AI SDK",
    mayReach: [core, text, sessions, "ai", "zod", "@ai-sdk/provider", "@ai-sdk/provider-utils"],
  },
  "@contextblocks/otel": {
    role: "adapter: OpenTelemetry spans through core's tracing hook",
    mayReach: [core, "@opentelemetry/api"],
  },
  "@contextblocks/inspector": {
    role: "tools: the inspector page, a request handler over any ContextBlocks and sessions",
    mayReach: [core, text, sessions],
  },
  "@contextblocks/agents": {
    role: "drop-in: Cloudflare agents' Sessions API names on the SQLite, FTS5, R2 and Postgres backends and the AI SDK",
    mayReach: [
      core,
      sql,
      text,
      sessions,
      sqlStores,
      "@contextblocks/sqlite",
      "@contextblocks/fts5",
      "@contextblocks/r2",
      "@contextblocks/postgres",
      "@contextblocks/ai",
      "ai",
      "zod",
      "@ai-sdk/provider",
      "@ai-sdk/provider-utils",
    ],
  },
  "@contextblocks/conformance": {
    role: "tools: the provider conformance suites",
    mayReach: [core, text, sessions, "vitest"],
  },
};

/** Storage backends: none may reach another, nor the AI SDK. */
export const backends = [
  "@contextblocks/sqlite",
  "@contextblocks/fts5",
  "@contextblocks/postgres",
  "@contextblocks/r2",
] as const;
