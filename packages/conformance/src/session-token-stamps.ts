import type { ConformanceMessage } from "./session-options.js";

/**
 * A `Session` of `@contextblocks/sessions` as `checkCompactionAcrossSessions` uses it, declared structurally
 * (the suite depends on no storage package).
 */
export interface CompactingSessionUnderTest {
  appendMessages(messages: readonly ConformanceMessage[], parentId?: string | null): Promise<void>;
  reportUsage(usage: { inputTokens: number; pendingTokens?: number }): Promise<void>;
  getHistory(): Promise<ConformanceMessage[]>;
  getCompactions(): Promise<{ fromMessageId: string; toMessageId: string }[]>;
}

/** What the check hands `open`: the compaction function and the `compactAfter` threshold to set. */
export interface CompactionSettings {
  compaction: (
    history: ConformanceMessage[],
  ) => Promise<{ summary: string; fromMessageId: string; toMessageId: string } | null>;
  threshold: number;
}

/** Tool output of each turn: JSON a chars/4 estimate undercounts (a tokenizer counts about a token a character). */
function toolOutput(turn: number): { rows: string[] } {
  return {
    rows: Array.from(
      { length: 60 },
      (_, row) => `{"t":${turn},"r":${row},"v":"${(turn * 7919 + row).toString(36)}"}`,
    ),
  };
}

/** One model turn of a tool-heavy agent: the user, a tool call with its result, the answer. */
function turnMessages(prefix: string, turn: number): ConformanceMessage[] {
  return [
    { id: `${prefix}-${turn}-user`, role: "user", parts: [{ type: "text", text: `Look up batch ${turn}.` }] },
    {
      id: `${prefix}-${turn}-tool`,
      role: "assistant",
      parts: [
        {
          type: "tool-lookup",
          toolCallId: `${prefix}-${turn}-call`,
          state: "output-available",
          input: { batch: turn },
          output: toolOutput(turn),
          // A tool part (the AI SDK's UI message shape), beyond the text parts `ConformanceMessage` names.
        } as ConformanceMessage["parts"][number],
      ],
    },
    {
      id: `${prefix}-${turn}-answer`,
      role: "assistant",
      parts: [{ type: "text", text: `Batch ${turn} read.` }],
    },
  ];
}

/** The provider's count for a prompt carrying these messages: one token per serialized character. */
function providerTokens(messages: readonly ConformanceMessage[]): number {
  return messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
}

/** Summarises every stored message but the last two (widening the previous overlay from the root). */
function compactAllButTail(prefix: string) {
  return async (history: ConformanceMessage[]) => {
    const stored = history.filter((message) => message.id.startsWith(`${prefix}-`));
    const root = stored[0];
    const end = history.at(-3);
    if (root === undefined || end === undefined || !end.id.startsWith(`${prefix}-`)) return null;
    return {
      summary: `Summary up to ${end.id.slice(prefix.length)}.`,
      fromMessageId: root.id,
      toMessageId: end.id,
    };
  };
}

/**
 * `compactAfter` with per-message token stamps and a stored calibration: a tool-heavy conversation whose
 * chars/4 estimate stays under the threshold while the provider reports several times more (Cloudflare
 * agents' issues #1538 and #1593) is run twice on one database, once through one long-lived `Session` and
 * once through a new `Session` per turn (the Durable Object pattern: one per request), with the model's
 * reported usage given to `reportUsage` after each turn is stored. Both must compact, at the same turns and
 * over the same ranges: a new `Session` starts from the stored stamps and calibration, not from nothing.
 * `open(sessionId, settings)` builds a `Session` on the database under test with `settings.compaction` as
 * its compaction function and `compactAfter(settings.threshold)`; each call must be a new object.
 * Returns the turns (0-based) after which each variant had compacted.
 */
export async function checkCompactionAcrossSessions(
  open: (
    sessionId: string,
    settings: CompactionSettings,
  ) => Promise<CompactingSessionUnderTest> | CompactingSessionUnderTest,
  options: { turns?: number; threshold?: number } = {},
): Promise<{ longLived: number[]; perRequest: number[] }> {
  const turns = options.turns ?? 12;
  const threshold = options.threshold ?? 12_000;
  const run = async (variant: "long" | "fresh"): Promise<{ compactedAfter: number[]; ranges: string[] }> => {
    const prefix = `stamps-${variant}`;
    const settings: CompactionSettings = { compaction: compactAllButTail(prefix), threshold };
    let session = await open(prefix, settings);
    const compactedAfter: number[] = [];
    let overlays = 0;
    for (let turn = 0; turn < turns; turn++) {
      if (variant === "fresh" && turn > 0) session = await open(prefix, settings);
      await session.appendMessages(turnMessages(prefix, turn));
      const count = (await session.getCompactions()).length;
      if (count > overlays) compactedAfter.push(turn);
      overlays = count;
      // The usage of the turn's model call, known once the turn is stored (a host's onFinish): it carried
      // the stored path as the model reads it (overlays applied). The next turn decides from it.
      await session.reportUsage({ inputTokens: providerTokens(await session.getHistory()) });
    }
    const ranges = (await session.getCompactions()).map(
      (overlay) =>
        `${overlay.fromMessageId.slice(prefix.length)}..${overlay.toMessageId.slice(prefix.length)}`,
    );
    return { compactedAfter, ranges };
  };
  const long = await run("long");
  const fresh = await run("fresh");
  if (long.compactedAfter.length === 0) {
    throw new Error(
      `checkCompactionAcrossSessions: one long-lived Session never compacted over ${turns} tool-heavy turns with the provider reporting about 4× the estimate (threshold ${threshold}); reportUsage's calibration is not applied`,
    );
  }
  if (JSON.stringify(long) !== JSON.stringify(fresh)) {
    throw new Error(
      `checkCompactionAcrossSessions: a new Session per turn compacted after turns [${fresh.compactedAfter.join(", ")}] over ${JSON.stringify(fresh.ranges)}, one long-lived Session after turns [${long.compactedAfter.join(", ")}] over ${JSON.stringify(long.ranges)}; the token stamps or the calibration are not read from storage`,
    );
  }
  return { longLived: long.compactedAfter, perRequest: fresh.compactedAfter };
}
