import type { ResolvedConfig } from "./config.js";
import { describeValue } from "./describe-value.js";
import { ContextError } from "./errors.js";
import type { TokenCounter } from "./tokens.js";

/** A required string argument, or `INVALID_INPUT` naming the field. */
export function requireString(label: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `Block "${label}": ${field} must be a string, got ${describeValue(value)}`,
      { label },
    );
  }
}

/**
 * `maxTokens` over everything a write stores for the block: the content, and for an entry its description
 * too (it is listed in the block).
 */
export function checkTokenLimit(
  config: ResolvedConfig,
  countTokens: TokenCounter,
  what: "block" | "entry",
  ...fields: ReadonlyArray<string | undefined>
): void {
  if (config.maxTokens === undefined) return;
  const tokens = fields.reduce((sum, field) => sum + (field ? countTokens(field) : 0), 0);
  if (tokens > config.maxTokens) {
    throw new ContextError(
      "MAX_TOKENS",
      `Block "${config.label}" ${what === "block" ? "exceeds" : "entry exceeds"} maxTokens: ${tokens} > ${config.maxTokens} (estimated tokens)`,
      { label: config.label },
    );
  }
}
