import {
  ContextBlocks,
  type ContextBlocksOptions,
  type ContextConfig,
  ContextError,
  SYSTEM_PROMPT_LABEL,
} from "@contextblocks/core";
import type { AnyContextProvider } from "@contextblocks/core/store-kit";
import type { SqlSource, StatementObserver } from "@contextblocks/sql";
import { toSqliteClient } from "@contextblocks/sql/store-kit";
import { SqliteContextProvider } from "./sqlite-context-provider.js";

/** Options of `createDurableContext`: a namespace, a statement hook, and `ContextBlocks`' own options. */
export interface DurableContextOptions extends ContextBlocksOptions {
  /** Keeps this context's blocks and frozen prompt apart from others in the same database. */
  namespace?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /** Versions kept for blocks declared without a provider (see `SqliteContextProvider`'s `versions`). On by default; `false` turns it off. */
  versions?: boolean | { retention?: number } | undefined;
}

/**
 * `ContextBlocks` on durable SQLite in one call, as Cloudflare agents' context API stores them: blocks
 * declared without a provider are stored in `cf_agents_context_blocks` under their label, and the frozen
 * prompt is always persisted under `_system_prompt`, so a cold start serves the exact cached string.
 *
 * ```ts
 * const context = createDurableContext(ctx.storage, [
 *   { label: "soul", provider: { get: async () => "You are helpful." } },
 *   { label: "memory", description: "Learned facts", maxTokens: 2_000 },
 * ]);
 * ```
 */
export function createDurableContext(
  source: SqlSource,
  configs: readonly ContextConfig[],
  options: DurableContextOptions = {},
): ContextBlocks {
  const { namespace, onStatement, versions, ...contextOptions } = options;
  const client = toSqliteClient(source, { onStatement });
  if (Array.isArray(configs)) for (const config of configs) refuseReservedLabel(config);
  const promptStore = new SqliteContextProvider(client, {
    label: SYSTEM_PROMPT_LABEL,
    namespace,
    versions: false, // the frozen prompt is not a block the model writes: no versions
  });
  const defaultProvider = (label: string): AnyContextProvider => {
    refuseReservedLabel({ label });
    return new SqliteContextProvider(client, { label, namespace, versions });
  };
  return new ContextBlocks(configs, promptStore, defaultProvider, {
    ...contextOptions,
    // Also refuses the label for a block added at run time.
    reservedLabels: [...(contextOptions.reservedLabels ?? []), SYSTEM_PROMPT_LABEL],
  });
}

function refuseReservedLabel(config: Pick<ContextConfig, "label"> | null | undefined): void {
  if (typeof config === "object" && config !== null && config.label === SYSTEM_PROMPT_LABEL) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block label "${SYSTEM_PROMPT_LABEL}" is reserved: createDurableContext stores the frozen prompt under it`,
      { label: SYSTEM_PROMPT_LABEL },
    );
  }
}
