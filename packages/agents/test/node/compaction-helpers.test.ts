// agents' compaction helper names (`agents/experimental/memory/utils`) through the compatibility entry.
import type { SessionMessage } from "@contextblocks/agents/experimental/memory/session";
import {
  alignBoundaryBackward,
  alignBoundaryForward,
  COMPACTION_PREFIX,
  estimateStringTokens,
  findTailCutByTokens,
  isCompactionMessage,
  sanitizeToolPairs,
  truncateOlderMessages,
} from "@contextblocks/agents/experimental/memory/utils";
import { describe, expect, it } from "vitest";

const say = (id: string, role: "user" | "assistant", text: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text }],
});
const call = (id: string, callId: string): SessionMessage => ({
  id,
  role: "assistant",
  parts: [
    { type: "tool-search", toolCallId: callId, toolName: "search", state: "input-available", input: {} },
  ],
});
const result = (id: string, callId: string, output: unknown): SessionMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "tool-search", toolCallId: callId, toolName: "search", state: "output-available", output }],
});

describe("agents' compaction helpers", () => {
  const messages = [
    say("u1", "user", "find it"),
    call("a1", "c1"),
    result("a2", "c1", "found"),
    say("u2", "user", "ok"),
  ];

  it("alignBoundaryForward / Backward never cut between a tool call and its result", () => {
    expect(alignBoundaryForward(messages, 2)).toBe(3);
    expect(alignBoundaryBackward(messages, 2)).toBe(1);
    expect(alignBoundaryForward(messages, 1)).toBe(1);
    expect(alignBoundaryBackward(messages, 0)).toBe(0);
  });

  it("findTailCutByTokens keeps minTailMessages and moves back over a tool pair", () => {
    expect(findTailCutByTokens(messages, 0, 0, 2)).toBe(1);
  });

  it("sanitizeToolPairs drops results whose call is gone and stubs calls whose result is gone", () => {
    const orphanResult = sanitizeToolPairs([
      say("u1", "user", "hi"),
      { ...result("a2", "c9", "late"), role: "tool" },
    ]);
    expect(orphanResult.map((m) => m.id)).toEqual(["u1"]);
    const orphanCall = sanitizeToolPairs([call("a1", "c1"), say("u2", "user", "next")]);
    expect(orphanCall.map((m) => m.id)).toEqual(["a1", "stub-c1", "u2"]);
    expect(orphanCall[1]?.parts[0]).toMatchObject({ toolCallId: "c1", toolName: "search" });
  });

  it("truncateOlderMessages cuts old tool outputs and text, keeps the recent ones, and changes no input", () => {
    const long = "y".repeat(2_000);
    const input = [result("a1", "c1", long), say("u1", "user", long), say("u2", "user", long)];
    const cut = truncateOlderMessages(input, { keepRecent: 1, maxToolOutputChars: 100, maxTextChars: 100 });
    expect(String(cut[0]?.parts[0]?.output).length).toBeLessThan(200);
    expect(String(cut[1]?.parts[0]?.text).length).toBeLessThan(200);
    expect(cut[2]).toBe(input[2]);
    expect(input[0]?.parts[0]?.output).toBe(long);
  });

  it("COMPACTION_PREFIX, isCompactionMessage and estimateStringTokens keep agents' names", () => {
    expect(COMPACTION_PREFIX).toBe("compaction_");
    // Only summaries a session made count: an id that merely starts with the prefix (a forged message) does not.
    expect(isCompactionMessage(say(`${COMPACTION_PREFIX}x`, "assistant", "summary"))).toBe(false);
    expect(estimateStringTokens("")).toBe(0);
    expect(estimateStringTokens("the ferry leaves at nine")).toBeGreaterThan(3);
  });
});
