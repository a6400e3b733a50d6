import { commonPrefixLength } from "../prefix-cache/request-text.js";

/** One request as a breakpoint cache (Anthropic, Bedrock) sees it. */
export interface BreakpointRequest {
  tokens: readonly number[];
  /** Token positions where the request's cache breakpoints end (`cacheControl` / `cachePoint`), ascending. */
  breakpoints: readonly number[];
}

/** What one request costs in cache terms. */
export interface BreakpointFigure {
  /** Tokens read from the cache (billed at the read price). */
  read: number;
  /** Tokens written to the cache (billed at the write price). */
  written: number;
}

/**
 * Anthropic's prompt cache (and Bedrock's cache points, which follow the same rules), as its documentation
 * describes it: only prefixes that end at a breakpoint are cached, and only from the model's minimum length
 * on; a request reads the longest cached prefix it starts with (up to its last breakpoint) and writes the
 * tokens from there to its last breakpoint. Every request of the session is within the cache's lifetime (a
 * conversation with turns under five minutes apart, or the 1-hour TTL).
 */
/**
 * Tokens a breakpoint's position may be off by: the request is tokenized as one text, so the last token of a
 * message can merge with the separator that follows it in a longer request. Providers cache whole content
 * blocks, where no such merge exists.
 */
const BOUNDARY_TOKENS = 2;

export function breakpointCache(requests: readonly BreakpointRequest[], minimum: number): BreakpointFigure[] {
  const entries: Array<{ tokens: readonly number[]; length: number }> = [];
  return requests.map((request) => {
    const last = request.breakpoints.at(-1) ?? 0;
    let read = 0;
    for (const entry of entries) {
      if (entry.length <= read || entry.length > last) continue;
      const common = commonPrefixLength(entry.tokens, request.tokens);
      if (common >= entry.length - BOUNDARY_TOKENS) read = Math.max(read, Math.min(common, entry.length));
    }
    const written = last >= minimum && last > read ? last - read : 0;
    for (const position of request.breakpoints) {
      if (position >= minimum) entries.push({ tokens: request.tokens, length: position });
    }
    return { read, written };
  });
}
