import type { SessionMessage } from "../message.js";

/** The tool call ids a message's parts carry (UI tool parts and dynamic tools, model tool calls/results). */
function toolCallIdsOf(message: SessionMessage): string[] {
  const ids: string[] = [];
  for (const part of message.parts) {
    if (typeof part.toolCallId === "string") ids.push(part.toolCallId);
  }
  return ids;
}

/**
 * Cut points that would separate a tool call from its result. A cut at `index` splits the messages into
 * `[0, index)` and `[index, n)`; it is unsafe when a tool call id appears on both sides.
 */
export function unsafeCuts(messages: readonly SessionMessage[]): Set<number> {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  messages.forEach((message, index) => {
    for (const id of toolCallIdsOf(message)) {
      if (!first.has(id)) first.set(id, index);
      last.set(id, index);
    }
  });
  const unsafe = new Set<number>();
  for (const [id, start] of first) {
    const end = last.get(id) ?? start;
    for (let cut = start + 1; cut <= end; cut++) unsafe.add(cut);
  }
  return unsafe;
}

/** The first safe cut at or after `index` (at most `messages.length`). */
export function alignForward(unsafe: ReadonlySet<number>, index: number, length: number): number {
  let cut = index;
  while (cut < length && unsafe.has(cut)) cut++;
  return cut;
}

/** The last safe cut at or before `index` (at least 0). */
export function alignBackward(unsafe: ReadonlySet<number>, index: number): number {
  let cut = index;
  while (cut > 0 && unsafe.has(cut)) cut--;
  return cut;
}

/**
 * Where the protected tail starts: walking back from the newest message, messages join the tail while the
 * tail stays within `budget` tokens, and always at least `minimum` of them. Never before `floor`.
 */
export async function tailStart(
  messages: readonly SessionMessage[],
  floor: number,
  budget: number,
  minimum: number,
  count: (message: SessionMessage) => number | Promise<number>,
): Promise<number> {
  let start = messages.length;
  let used = 0;
  while (start > floor) {
    const candidate = messages[start - 1] as SessionMessage;
    const tokens = await count(candidate);
    const taken = messages.length - start;
    if (taken >= minimum && used + tokens > budget) break;
    used += tokens;
    start--;
  }
  return start;
}
