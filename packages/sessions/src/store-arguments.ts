import { ContextError } from "@contextblocks/core";
import { clipped, describeValue, loneSurrogateIndex } from "@contextblocks/core/store-kit";
import { checkMessageId } from "./message.js";

/**
 * The argument checks every `SessionStore` and `SessionRegistry` makes before it touches storage, in one
 * place so the memory, SQLite and Postgres stores refuse the same inputs with the same message (the
 * conformance suite holds third-party stores to them too). Each throws `ContextError("INVALID_INPUT")`.
 */

/**
 * `addCompaction(summary, fromMessageId, toMessageId)`: a well-formed string summary and two message ids.
 * A lone UTF-16 surrogate is refused on every store: SQL stores keep the summary as UTF-8 text, where it
 * would silently become U+FFFD (the memory store would keep it), so the same summary would read back two ways.
 */
export function checkCompactionArguments(
  summary: unknown,
  fromMessageId: unknown,
  toMessageId: unknown,
): void {
  if (typeof summary !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `addCompaction: summary must be a string, got ${describeValue(summary)}`,
    );
  }
  checkWellFormedText(summary, "summary", "addCompaction");
  checkMessageId(fromMessageId, "fromMessageId", "addCompaction");
  checkMessageId(toMessageId, "toMessageId", "addCompaction");
}

/**
 * A text a store or registry keeps (a compaction summary; a session's id, name, model, source or end reason),
 * by `operation`: a lone UTF-16 surrogate is refused on every store, as SQL stores keep UTF-8 text where it
 * would silently become U+FFFD (and the memory stores would keep it as given).
 */
export function checkWellFormedText(text: string, what: string, operation: string): void {
  const index = loneSurrogateIndex(text);
  if (index !== -1) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: the ${what} has a lone UTF-16 surrogate at index ${index}; nothing was stored`,
    );
  }
}

/**
 * Most characters a session registry keeps in one text field: a session's id, name, parent id, model, source
 * or end reason (what `SessionManager` lists on every page load: a title, not a document). The same bound as
 * a message id (`maximumMessageIdLength`).
 */
export const maximumSessionTextLength = 1_024;

/**
 * A text a session registry keeps (`what`: "name", "model", …), by `operation`: a string of at most
 * `maximumSessionTextLength` characters without a lone UTF-16 surrogate (`emptyAllowed`: whether `""` is one).
 * Checked by `SessionManager` above the registry and by every registry (the conformance suite holds them to it).
 * `owner` prefixes the message.
 */
export function checkSessionText(
  value: unknown,
  what: string,
  operation: string,
  options: { emptyAllowed?: boolean; owner?: string | undefined } = {},
): string {
  const named = `${options.owner === undefined ? "" : `${options.owner}.`}${operation}`;
  if (typeof value !== "string" || (options.emptyAllowed !== true && value.length === 0)) {
    throw new ContextError(
      "INVALID_INPUT",
      `${named}: the ${what} must be a${options.emptyAllowed === true ? "" : " non-empty"} string, got ${describeValue(value)}`,
    );
  }
  if (value.length > maximumSessionTextLength) {
    throw new ContextError(
      "INVALID_INPUT",
      `${named}: the ${what} is ${value.length} characters long; the limit is ${maximumSessionTextLength}; nothing was stored`,
    );
  }
  checkWellFormedText(value, what, named);
  return value;
}

/**
 * A run-state store's session id (`load`, `save`, `delete`): a non-empty string without a lone UTF-16
 * surrogate. `owner` prefixes the message.
 */
export function checkRunStateSessionId(sessionId: unknown, operation: string, owner?: string): string {
  const named = `${owner === undefined ? "" : `${owner}.`}${operation}`;
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `${named}: the session id must be a non-empty string, got ${describeValue(sessionId)}`,
    );
  }
  const index = loneSurrogateIndex(sessionId);
  if (index !== -1) {
    throw new ContextError(
      "INVALID_INPUT",
      `${named}: the session id has a lone UTF-16 surrogate at index ${index} (SQL stores keep UTF-8, where it cannot be kept unchanged)`,
    );
  }
  return sessionId;
}

/**
 * `RunStateStore.save(sessionId, states)`'s states as the JSON text of each source's state, every one checked
 * before anything is written: an object of objects (not arrays), source ids without a lone UTF-16 surrogate,
 * each state one JSON can hold (a cycle, a `BigInt`, a throwing getter, a `toJSON` that returns nothing are
 * refused by source id). Checked by every run-state store; the conformance suite holds them to it.
 */
export function runStateRows(states: unknown, owner?: string): { sourceId: string; json: string }[] {
  const named = `${owner === undefined ? "" : `${owner}.`}save`;
  if (typeof states !== "object" || states === null || Array.isArray(states)) {
    throw new ContextError(
      "INVALID_INPUT",
      `${named}: states must be an object of states by source id, got ${describeValue(states)}`,
    );
  }
  return Object.entries(states).map(([sourceId, state]) => {
    checkWellFormedText(sourceId, "source id", named);
    if (typeof state !== "object" || state === null || Array.isArray(state)) {
      throw new ContextError(
        "INVALID_INPUT",
        `${named}: the state of "${clipped(sourceId)}" must be an object, got ${describeValue(state)}`,
      );
    }
    let json: string | undefined;
    try {
      // JSON escapes NUL and lone surrogates inside the state: the text is storable in every dialect.
      json = JSON.stringify(state);
    } catch (error) {
      throw new ContextError(
        "INVALID_INPUT",
        `${named}: the state of "${clipped(sourceId)}" cannot be stored as JSON: ${String(error)}`,
        { cause: error },
      );
    }
    if (typeof json !== "string" || !json.startsWith("{")) {
      throw new ContextError(
        "INVALID_INPUT",
        `${named}: the state of "${clipped(sourceId)}" is not an object as JSON (its toJSON gave ${json === undefined ? "nothing" : clipped(json)})`,
      );
    }
    return { sourceId, json };
  });
}

/** Most hits a search returns. */
export const maximumSearchLimit = 1_000;

/**
 * A search's `limit`: a number from 1 to `maximumSearchLimit`, floored (`2.5` is 2). Checked above the
 * backend, so a limit of 0, -1 or `NaN` is refused by name on every backend instead of finding nothing. Only
 * a number: `"10"`, `true` or `[5]` (which JavaScript would turn into 10, 1 and 5) are refused too.
 */
export function checkSearchLimit(limit: unknown): number {
  const whole = typeof limit === "number" ? Math.floor(limit) : Number.NaN;
  if (!Number.isFinite(whole) || whole < 1 || whole > maximumSearchLimit) {
    throw new ContextError(
      "INVALID_INPUT",
      `search: limit must be a whole number from 1 to ${maximumSearchLimit}, got ${typeof limit === "number" ? String(limit) : describeValue(limit)}`,
    );
  }
  return whole;
}

/** Most sessions one `list` returns when it is given a limit. */
export const maximumListLimit = 1_000;

/**
 * `list({ limit })`'s limit: a whole number from 1 to `maximumListLimit`. Checked by `SessionManager` above the
 * registry and by every registry (a SQL `LIMIT -1` would read every row). `owner` prefixes the message.
 */
export function checkListLimit(limit: unknown, owner?: string): number {
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > maximumListLimit) {
    throw new ContextError(
      "INVALID_INPUT",
      `${owner === undefined ? "" : `${owner}.`}list: limit must be a whole number from 1 to ${maximumListLimit}, got ${describeValue(limit)}`,
    );
  }
  return limit;
}

/** `getRecentHistory(leafId, maxBytes)`: a finite byte budget ≥ 0. */
export function checkRecentHistoryBudget(maxBytes: unknown): number {
  if (typeof maxBytes !== "number" || !Number.isFinite(maxBytes) || maxBytes < 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `getRecentHistory: maxBytes must be a number ≥ 0, got ${describeValue(maxBytes)}`,
    );
  }
  return maxBytes;
}

/**
 * `addUsage(id, inputTokens, outputTokens, cost)`: three finite numbers ≥ 0 (the totals only grow: a negative
 * amount would make them say less than was spent), each at most `Number.MAX_SAFE_INTEGER`: two amounts near
 * 1e308 summed to `Infinity`, a total no later call could repair (and Postgres' BIGINT refused them with its
 * own error). `owner` prefixes the message.
 */
export function checkUsageArguments(
  inputTokens: unknown,
  outputTokens: unknown,
  cost: unknown,
  owner?: string,
): void {
  for (const [name, value] of [
    ["inputTokens", inputTokens],
    ["outputTokens", outputTokens],
    ["cost", cost],
  ] as const) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `${owner === undefined ? "" : `${owner}.`}addUsage: ${name} must be a finite number ≥ 0, got ${describeValue(value)}`,
      );
    }
    if (value > Number.MAX_SAFE_INTEGER) {
      throw new ContextError(
        "INVALID_INPUT",
        `${owner === undefined ? "" : `${owner}.`}addUsage: ${name} must be at most ${Number.MAX_SAFE_INTEGER}, got ${describeValue(value)}`,
      );
    }
  }
}

/** `setTokenCalibration(calibration)`: a positive finite ratio (provider-reported tokens over the estimate). */
export function checkCalibration(calibration: unknown): number {
  if (typeof calibration !== "number" || !Number.isFinite(calibration) || calibration <= 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `setTokenCalibration: the calibration must be a positive finite number, got ${describeValue(calibration)}`,
    );
  }
  return calibration;
}
