import type { SessionMessage } from "@contextblocks/sessions";
import type { WriterScript } from "./writer-script.js";

/**
 * The appends the writers send: batch `b` of writer `w` is one `appendMessages` call of 1 to 3 messages
 * with ids `w.b-k`, each a pure function of its id, so a checker knows what every stored message must
 * read back as. Some hold a finished tool call; every 25th batch carries, second when it can, a message
 * over the SQLite stores' 1.5 MiB row budget (stored in continuation rows: several statements per append),
 * with multi-byte characters and surrogate pairs throughout.
 */
export function batchMessages(batch: number, writer = "w"): SessionMessage[] {
  return Array.from({ length: batchSize(batch) }, (_, index) => messageOf(writer, batch, index));
}

function batchSize(batch: number): number {
  return 1 + (batch % 3);
}

const idPattern = /^([a-z0-9]+)\.(\d+)-(\d+)$/;

/** Where a message id of `batchMessages` stands: its writer, batch and place in the batch; `null` for another id. */
export function placeOf(id: string): { writer: string; batch: number; index: number } | null {
  const match = idPattern.exec(id);
  if (match === null) return null;
  const place = { writer: match[1] ?? "", batch: Number(match[2]), index: Number(match[3]) };
  return place.index < batchSize(place.batch) ? place : null;
}

/** The message with this id, as its writer sends it; `null` for an id no writer makes. */
export function appendedMessage(id: string): SessionMessage | null {
  const place = placeOf(id);
  return place === null ? null : messageOf(place.writer, place.batch, place.index);
}

function messageOf(writer: string, batch: number, index: number): SessionMessage {
  const id = `${writer}.${batch}-${index}`;
  const role = index % 2 === 0 ? "user" : "assistant";
  // The large message: the batch's second when it has two or more (inside a batch), else its only one.
  if (batch % 25 === 23 && index === Math.min(1, batchSize(batch) - 1)) {
    return { id, role, parts: [{ type: "text", text: largeText(id) }] };
  }
  if (role === "assistant" && batch % 2 === 0) {
    return {
      id,
      role,
      parts: [
        { type: "text", text: `looking up ${id}` },
        {
          type: "tool-lookup",
          toolCallId: `call-${id}`,
          state: "output-available",
          input: { id },
          output: `the record of ${id}`,
        },
        { type: "text", text: `found the record of ${id}` },
      ],
    };
  }
  return { id, role, parts: [{ type: "text", text: `${role} says ${id}: ä ø 漢字 😀` }] };
}

/** About 1.6 MiB of UTF-8: past the 1.5 MiB a SQLite row holds inline. */
function largeText(id: string): string {
  const unit = `${id} tool output line: ä ø 漢字 😀\n`;
  return unit.repeat(Math.ceil((1.6 * 1024 * 1024) / new TextEncoder().encode(unit).length));
}

/** The writer script of `batchMessages`. */
export const batchScript: WriterScript = {
  isWhole(message) {
    const expected = appendedMessage(message.id);
    if (expected === null) return false;
    const { createdAt: _createdAt, ...stored } = message;
    return JSON.stringify(stored) === JSON.stringify(expected);
  },
  partialBatches(path) {
    const stored = new Map<string, string[]>();
    for (const message of path) {
      const place = placeOf(message.id);
      if (place === null) continue;
      const batch = `${place.writer}.${place.batch}`;
      stored.set(batch, [...(stored.get(batch) ?? []), message.id]);
    }
    return [...stored].flatMap(([batch, ids]) =>
      ids.length === batchSize(Number(batch.split(".")[1])) ? [] : [ids[0] ?? batch],
    );
  },
};
