import type { BlockDefinition } from "./block-definition.js";
import type { HashPair } from "./fingerprint.js";
import type { BlockKind, ContextConfig } from "./types.js";

/**
 * A block configuration that passed every check of `BlockRegistry.addAll` (each definition, each provider's
 * shape, no two headers alike, no reserved label), kept as the values those checks read. A Durable Object
 * builds the same configuration on every wake: a construction whose values equal one of these, in order,
 * takes its checked definitions, kinds and fingerprint as they are, comparing values instead of looking each
 * label up (see docs/wake-cost.md). Any difference, even one value, and the full checks run.
 */
export interface ValidatedConfiguration {
  /** Each block's checked definition: its label and the values the checks read (`input`), as given. */
  readonly definitions: readonly BlockDefinition[];
  /** The kind each block's provider had: a provider of another shape is checked again. */
  readonly kinds: readonly BlockKind[];
  /** The reserved labels the configuration was checked against, sorted. */
  readonly reserved: readonly string[];
  /** The headers' hashes folded, the configuration's fingerprint before formatting. */
  readonly folded: HashPair;
}

/** Configurations kept at once: an isolate usually builds a handful (one per agent class), not hundreds. */
const LIMIT = 16;

const configurations = new Map<string, ValidatedConfiguration>();

/** The key a configuration is kept under: its length and first label (one look-up per construction). */
function keyOf(count: number, first: unknown): string | undefined {
  return typeof first === "string" ? `${count}\u0000${first}` : undefined;
}

/** The validated configuration whose first label and length are those of `configs`, if one is kept. */
export function validatedConfiguration(
  configs: readonly ContextConfig[],
): ValidatedConfiguration | undefined {
  const first = configs[0];
  if (typeof first !== "object" || first === null) return undefined;
  const key = keyOf(configs.length, first.label);
  return key === undefined ? undefined : configurations.get(key);
}

/** Keeps a configuration that passed every check (replacing one of the same key). */
export function keepValidatedConfiguration(configuration: ValidatedConfiguration): void {
  const key = keyOf(configuration.definitions.length, configuration.definitions[0]?.label);
  if (key === undefined) return;
  if (configurations.size >= LIMIT && !configurations.has(key)) configurations.clear();
  configurations.set(key, configuration);
}

/** Whether `reserved` holds exactly the labels `configuration` was checked against. */
export function sameReservedLabels(
  configuration: ValidatedConfiguration,
  reserved: ReadonlySet<string>,
): boolean {
  if (configuration.reserved.length !== reserved.size) return false;
  for (const label of configuration.reserved) if (!reserved.has(label)) return false;
  return true;
}
