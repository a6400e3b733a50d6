import type { SessionMessage } from "./message.js";
import type { StoredCompaction } from "./session-store.js";

/** Id prefix of the synthetic summary messages, as `agents` writes it (its compaction helpers look for it). */
export const compactionPrefix = "compaction_";

/** The range an overlay's synthetic message stands for, in its `metadata.compaction`. */
export interface CompactionRange {
  id: string;
  fromMessageId: string;
  toMessageId: string;
}

/** The id of the synthetic message that stands for an overlay. */
export function summaryMessageId(compaction: StoredCompaction): string {
  return `${compactionPrefix}${compaction.id}`;
}

/**
 * The path with each overlay's range `fromMessageId..toMessageId` replaced by one assistant message holding
 * the summary. An overlay applies when both ends are on the path in that order. Where overlays overlap on
 * the same start, the newest wins (a later compaction updates the earlier summary); a range that starts
 * inside an applied one is ignored. The stored messages are never changed.
 */
export function applyCompactions(
  messages: readonly SessionMessage[],
  compactions: readonly StoredCompaction[],
): SessionMessage[] {
  if (compactions.length === 0) return [...messages];
  const position = new Map(messages.map((message, index) => [message.id, index]));
  // Newest overlay per starting position whose end lies on the path after it.
  const byStart = new Map<number, { end: number; compaction: StoredCompaction }>();
  for (const compaction of compactions) {
    const start = position.get(compaction.fromMessageId);
    const end = position.get(compaction.toMessageId);
    if (start === undefined || end === undefined || end < start) continue;
    byStart.set(start, { end, compaction });
  }
  if (byStart.size === 0) return [...messages];
  const result: SessionMessage[] = [];
  for (let index = 0; index < messages.length; index++) {
    const overlay = byStart.get(index);
    if (overlay === undefined) {
      result.push(messages[index] as SessionMessage);
      continue;
    }
    result.push(summaryMessage(overlay.compaction));
    index = overlay.end;
  }
  return result;
}

/**
 * The summary messages `applyCompactions` made in this process. Only these are summaries: a stored message
 * whose id and metadata look like one (a client can send any id and metadata) is an ordinary message, so it
 * is never taken for an overlay, widened over or sent to the summariser as the previous summary.
 */
const madeSummaries = new WeakSet<SessionMessage>();

function summaryMessage(compaction: StoredCompaction): SessionMessage {
  const message: SessionMessage = {
    id: summaryMessageId(compaction),
    role: "assistant",
    parts: [{ type: "text", text: compaction.summary }],
    createdAt: compaction.createdAt,
    // The range travels with the summary so a later compaction can widen it (see compaction/).
    metadata: { compaction: rangeOf(compaction) },
  };
  madeSummaries.add(message);
  return message;
}

function rangeOf(compaction: StoredCompaction): CompactionRange {
  return { id: compaction.id, fromMessageId: compaction.fromMessageId, toMessageId: compaction.toMessageId };
}

/** The range of a synthetic summary message, or `null` for any other message. */
export function compactionRangeOf(message: SessionMessage): CompactionRange | null {
  if (!isCompactionMessage(message)) return null;
  const metadata = (message as { metadata?: unknown }).metadata;
  const range = (metadata as { compaction?: Partial<CompactionRange> } | undefined)?.compaction;
  if (typeof range?.fromMessageId !== "string" || typeof range.toMessageId !== "string") return null;
  return { id: String(range.id), fromMessageId: range.fromMessageId, toMessageId: range.toMessageId };
}

/** True for the synthetic summary message of an overlay (made by `applyCompactions`, never a stored one). */
export function isCompactionMessage(message: SessionMessage): boolean {
  return madeSummaries.has(message);
}

/**
 * True when `overlay` (a session's newest) is this very compaction: a retried `addCompaction` whose insert
 * committed returns it instead of storing a second overlay.
 */
export function sameOverlay(
  overlay: StoredCompaction | undefined,
  summary: string,
  fromMessageId: string,
  toMessageId: string,
): overlay is StoredCompaction {
  return (
    overlay !== undefined &&
    overlay.summary === summary &&
    overlay.fromMessageId === fromMessageId &&
    overlay.toMessageId === toMessageId
  );
}
