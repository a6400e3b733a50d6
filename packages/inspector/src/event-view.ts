/**
 * What a lifecycle event says on the inspector's stream: its type, ids, names, counts and the size of what
 * it carried, never a body (a message, a summary, a prompt, a reminder). A body can hold any private text
 * and any number of bytes; the page fetches what it shows (a reload reads the snapshot). Fields are copied
 * by an allow-list per event type, so a field added to an event later stays off the stream until it is
 * listed here.
 */
export type EventView = Record<string, Scalar | string[] | Scalars>;

type Scalar = string | number | boolean | null;
type Scalars = Record<string, Scalar>;

interface Shape {
  /** Scalar fields copied as they are (string, number, boolean or null; anything else is left out). */
  fields: readonly string[];
  /** Lists of ids or labels, copied when every item is a string. */
  lists?: readonly string[];
  /** The field whose body is left out and reported as `bytes`. */
  body?: string;
}

const SHAPES: Readonly<Record<string, Shape>> = {
  // @contextblocks/core's `ContextBlocks.subscribe`
  "block-written": { fields: ["label", "action", "key", "version"] },
  "prompt-frozen": { fields: ["hash", "origin"], body: "prompt" },
  "prompt-refreshed": { fields: ["hash"], body: "prompt" },
  "reminder-sent": { fields: [], lists: ["labels"], body: "reminder" },
  // @contextblocks/sessions' `Session.subscribe` and `SessionManager.subscribe`
  compacted: {
    fields: ["fromMessageId", "toMessageId", "messages", "tokensBefore", "tokensAfter"],
    body: "summary",
  },
  "message-appended": {
    fields: ["messageId", "parentId", "role", "createdAt", "imported"],
    body: "message",
  },
  "message-updated": { fields: ["messageId", "role"], body: "message" },
  "messages-deleted": { fields: [], lists: ["messageIds"] },
  "messages-cleared": { fields: [] },
  "session-created": { fields: ["name", "parentSessionId"] },
  "session-deleted": { fields: [] },
};

/** A write's origin: the tool or method, never the content it wrote. */
const SOURCE_FIELDS = ["kind", "name", "toolCallId", "restoredFrom"] as const;

/** A stored overlay's ids and time; its summary is a body. */
const COMPACTION_FIELDS = ["fromMessageId", "toMessageId", "createdAt"] as const;

/**
 * The event as the stream sends it. Events of a type not listed above (from an `events` source of the
 * host's own) carry their type and session id only.
 */
export function eventView(event: object): EventView {
  const record = event as Record<string, unknown>;
  const view: EventView = {};
  const type = record.type;
  if (typeof type === "string") view.type = type;
  copyScalars(record, ["sessionId"], view);
  const shape = typeof type === "string" ? SHAPES[type] : undefined;
  if (shape !== undefined) {
    copyScalars(record, shape.fields, view);
    for (const name of shape.lists ?? []) {
      const list = record[name];
      if (Array.isArray(list) && list.every((item) => typeof item === "string")) view[name] = list;
    }
    if (shape.body !== undefined && shape.body in record) view.bytes = bytesOf(record[shape.body]);
  }
  if (type === "block-written" && isRecord(record.source)) {
    const source: Scalars = {};
    copyScalars(record.source, SOURCE_FIELDS, source);
    view.source = source;
  }
  if (type === "compaction-added" && isRecord(record.compaction)) {
    const compaction = record.compaction;
    if (typeof compaction.id === "string") view.compactionId = compaction.id;
    copyScalars(compaction, COMPACTION_FIELDS, view);
    if ("summary" in compaction) view.bytes = bytesOf(compaction.summary);
  }
  return view;
}

function copyScalars(
  from: Record<string, unknown>,
  fields: readonly string[],
  to: Record<string, unknown>,
): void {
  for (const name of fields) {
    const value = from[name];
    if (
      typeof value === "string" ||
      typeof value === "boolean" ||
      value === null ||
      (typeof value === "number" && Number.isFinite(value))
    ) {
      to[name] = value;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** UTF-8 bytes of a body: a text as it is, anything else as JSON (a message as a store keeps it). */
function bytesOf(value: unknown): number {
  let text: string | undefined;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    return 0; // A value JSON cannot hold (a cycle): nothing the page could fetch either.
  }
  return text === undefined ? 0 : new TextEncoder().encode(text).byteLength;
}
