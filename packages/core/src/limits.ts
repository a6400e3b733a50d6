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

/**
 * The `tokenCounter` option with its answers checked: a count that is not a finite number ≥ 0 (`NaN`, a
 * string, -1) fails with `INVALID_CONFIG` naming it. Unchecked, `NaN > maxTokens` is false, so a counter
 * that answers `NaN` would let every write past `maxTokens` and render "NaN%" in the frozen prompt.
 */
export function checkedTokenCounter(counter: unknown): TokenCounter {
  if (typeof counter !== "function") {
    throw new ContextError(
      "INVALID_CONFIG",
      `tokenCounter must be a function (text) => number, got ${describeValue(counter)}`,
    );
  }
  return (text) => {
    const count: unknown = counter(text);
    if (typeof count !== "number" || !Number.isFinite(count) || count < 0) {
      throw new ContextError(
        "INVALID_CONFIG",
        `tokenCounter must return a finite number ≥ 0, got ${describeValue(count)} for a text of ${text.length} characters`,
      );
    }
    return count;
  };
}

/** The `maxToolContentLength` option: a positive whole number of characters, or omitted. */
export function checkMaxToolContentLength(length: unknown): void {
  if (length !== undefined && !(Number.isSafeInteger(length) && (length as number) > 0)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `maxToolContentLength must be a positive integer, got ${describeValue(length)}`,
    );
  }
}
