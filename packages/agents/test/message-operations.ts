import fc from "fast-check";

// The message operations the randomized differentials share: a `Session` and a session provider take the same
// appends, updates, deletes, reads and overlays. Each differential composes these with its own operations, in
// an order of its own (the order shapes what a seed generates).

/** The ids a sequence draws from: few, so appends, updates and deletes meet the same messages. */
export const messageIds = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"] as const;
export const messageId = fc.constantFrom(...messageIds);
export const role = fc.constantFrom("user", "assistant");
/** A fraction of a list's length: a position read when the step runs. */
export const position = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

export type MessageOperation =
  | { kind: "append"; id: string; role: string; text: string; parent: "latest" | "root" | number }
  | { kind: "update"; position: number; role: string; text: string }
  | { kind: "delete"; ids: string[] }
  | { kind: "getHistory" | "getPathLength"; leaf: string | null | undefined }
  | { kind: "getMessage" | "getBranches"; id: string }
  | { kind: "addCompaction"; from: number; to: number; onPath: boolean; summary: string };

/** The weighted arbitraries of `MessageOperation`, with `text` for messages and summaries. */
export function messageOperations(text: fc.Arbitrary<string>) {
  return {
    append: {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant("append" as const),
        id: messageId,
        role,
        text,
        parent: fc.oneof(fc.constantFrom("latest" as const, "root" as const), position),
      }),
    },
    update: {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant("update" as const), position, role, text }),
    },
    delete: {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("delete" as const),
        ids: fc.uniqueArray(fc.oneof(messageId, fc.constant("unknown")), { maxLength: 3 }),
      }),
    },
    history: {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constantFrom("getHistory" as const, "getPathLength" as const),
        leaf: fc.oneof(fc.constantFrom(undefined, null, "unknown"), messageId),
      }),
    },
    lookup: {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constantFrom("getMessage" as const, "getBranches" as const),
        id: messageId,
      }),
    },
    compaction: {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("addCompaction" as const),
        from: position,
        to: position,
        onPath: fc.boolean(),
        summary: text,
      }),
    },
  };
}
