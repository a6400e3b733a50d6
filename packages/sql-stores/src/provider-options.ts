import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { StatementObserver } from "@contextblocks/sql";

/** The options every block store takes (the object form of its second argument). */
export interface BlockStoreOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this store's rows apart from every other namespace's and from plain `agents/context` rows. */
  namespace?: string | undefined;
  /**
   * Create the table on first write when it is missing. Default `true`; `false` where the tables were
   * created ahead (Postgres' `schema.sql`): a missing table is then an error that says so.
   */
  createTables?: boolean | undefined;
  /** Per-statement report. Only used by the backends' classes, which build the `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * The second argument of a block store: a label, an options object, or nothing. Anything else is refused
 * with an error naming `owner`, as is a `createTables` that is not a boolean.
 */
export function blockStoreOptions<Options extends BlockStoreOptions>(
  labelOrOptions: string | Options | undefined,
  owner: string,
): Options {
  const options = (
    typeof labelOrOptions === "string" ? { label: labelOrOptions } : (labelOrOptions ?? {})
  ) as Options;
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: the second argument must be a label or an options object, got ${describeValue(options)}`,
    );
  }
  if (options.createTables !== undefined && typeof options.createTables !== "boolean") {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: createTables must be a boolean, got ${describeValue(options.createTables)}`,
    );
  }
  return options;
}

/** The `owner` option (the class name errors begin with) when one was given, else `fallback`. */
export function ownerOf(labelOrOptions: unknown, fallback: string): string {
  if (typeof labelOrOptions === "object" && labelOrOptions !== null) {
    const owner = (labelOrOptions as { owner?: unknown }).owner;
    if (typeof owner === "string" && owner.length > 0) return owner;
  }
  return fallback;
}
