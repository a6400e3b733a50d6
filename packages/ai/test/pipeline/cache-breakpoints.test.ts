import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withCacheHints } from "../../src/pipeline/cache-hints.js";
import type { ModelCallOptions } from "../../src/pipeline/model-types.js";
import { breakpointTtls, longerTtlsFirst } from "./helpers.js";

/** No breakpoint, or one of the caller's in either spelling, with and without a TTL. */
const mark = fc.constantFrom(
  undefined,
  { anthropic: { cacheControl: { type: "ephemeral" } } },
  { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } },
  { anthropic: { cache_control: { type: "ephemeral", ttl: "5m" } } },
  { bedrock: { cachePoint: { type: "default" } } },
  { bedrock: { cachePoint: { type: "default", ttl: "1h" } } },
);

const withMark = (options: object | undefined) => (options ? { providerOptions: options } : {});

/** A call as the pipeline assembles it: the frozen prompt, a conversation, tools, with the caller's marks. */
const calls = fc
  .record({
    system: mark,
    messages: fc.array(fc.record({ own: mark, parts: fc.array(mark, { minLength: 1, maxLength: 3 }) }), {
      minLength: 1,
      maxLength: 6,
    }),
    tools: fc.array(mark, { maxLength: 3 }),
    topLevel: mark,
  })
  .map(
    ({ system, messages, tools, topLevel }) =>
      ({
        prompt: [
          { role: "system", content: "frozen prompt", ...withMark(system) },
          ...messages.map(({ own, parts }, index) => ({
            role: index % 2 === 0 ? "user" : "assistant",
            content: parts.map((part, partIndex) => ({
              type: "text",
              text: `${index}.${partIndex}`,
              ...withMark(part),
            })),
            ...withMark(own),
          })),
        ],
        tools: tools.map((options, index) => ({
          type: "function",
          name: `tool${index}`,
          inputSchema: { type: "object" },
          ...withMark(options),
        })),
        ...withMark(topLevel),
      }) as ModelCallOptions,
  );

describe("withCacheHints on any breakpoints a caller placed", () => {
  it("adds within four in all, keeps longer TTLs first, and changes none of the caller's", async () => {
    await fc.assert(
      fc.asyncProperty(calls, fc.constantFrom("5m", "1h"), async (params, ttl) => {
        const hinted = await withCacheHints(
          params,
          { sessionId: "s", frozenPrompt: true },
          { ttl, openai: false },
        );
        for (const namespace of ["anthropic", "bedrock"] as const) {
          const before = breakpointTtls(params, namespace);
          const after = breakpointTtls(hinted, namespace);
          expect(after.length).toBeLessThanOrEqual(Math.max(4, before.length));
          if (longerTtlsFirst(before)) expect(longerTtlsFirst(after)).toBe(true);
        }
        // The caller's own options are untouched: the hints only add to messages the caller left unmarked.
        hinted.prompt.forEach((message, index) => {
          const original = params.prompt[index]!;
          expect(message.content).toBe(original.content);
          for (const [namespace, value] of Object.entries(original.providerOptions ?? {})) {
            expect(message.providerOptions?.[namespace]).toEqual(value);
          }
        });
        expect(hinted.tools).toBe(params.tools);
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it("with no breakpoints of the caller's, marks the frozen prompt and the last message", async () => {
    const params = {
      prompt: [
        { role: "system", content: "frozen prompt" },
        { role: "user", content: [{ type: "text", text: "hello" }] },
      ],
    } as ModelCallOptions;
    const hinted = await withCacheHints(
      params,
      { sessionId: "s", frozenPrompt: true },
      { ttl: "1h", openai: false },
    );
    expect(breakpointTtls(hinted, "anthropic")).toEqual(["1h", "1h"]);
    expect(breakpointTtls(hinted, "bedrock")).toEqual(["5m", "5m"]);
  });
});
