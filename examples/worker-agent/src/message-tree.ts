import type { SessionMessage, StoredCompaction } from "@contextblocks/sessions";
import { messagesTable } from "@contextblocks/sqlite/schema";
import type { CompactionView, TreeNodeView } from "./snapshot.js";
import { messageText } from "./turn-message.js";

/** Messages of one session the inspector shows; a longer conversation shows its first ones and says so. */
export const MAX_TREE_MESSAGES = 400;
/** Characters of a message shown in the tree. */
const PREVIEW_LENGTH = 280;

type MessageRow = {
  id: string;
  parent_id: string | null;
  role: string;
  content: string;
};

/** Where a stored message hangs in its session's tree, or `null` when the session has no such message. */
export function placeOf(
  storage: DurableObjectStorage,
  sessionId: string,
  messageId: string,
): { parentId: string | null; role: string } | null {
  const row = storage.sql
    .exec<{ parent_id: string | null; role: string }>(
      `SELECT parent_id, role FROM ${messagesTable} WHERE id = ? AND session_id = ?`,
      messageId,
      sessionId,
    )
    .toArray()[0];
  return row === undefined ? null : { parentId: row.parent_id, role: row.role };
}

/**
 * Every message of a session, branches included, in tree order (a parent before its children, older
 * children first). The `Session` API reads one path at a time; the inspector shows the whole tree, so it
 * reads the table the session writes (read only, in the schema `agents` defined).
 */
export function readTree(
  storage: DurableObjectStorage,
  sessionId: string,
  latestLeafId: string | null,
  compactions: readonly StoredCompaction[],
): { nodes: TreeNodeView[]; total: number; overlays: CompactionView[] } {
  const rows = storage.sql
    .exec<MessageRow>(
      `SELECT id, parent_id, role, content FROM ${messagesTable} WHERE session_id = ? ORDER BY rowid LIMIT ?`,
      sessionId,
      MAX_TREE_MESSAGES + 1,
    )
    .toArray();
  const total = rows.length > MAX_TREE_MESSAGES ? countMessages(storage, sessionId) : rows.length;
  const shown = rows.slice(0, MAX_TREE_MESSAGES);
  const parents = new Map(shown.map((row) => [row.id, row.parent_id]));
  const activePath = pathTo(latestLeafId, parents);
  const overlays = compactions.map((compaction) => overlayView(compaction, parents, activePath));
  const coveredBy = new Map<string, string>();
  for (const overlay of overlays) for (const id of overlay.messageIds) coveredBy.set(id, overlay.id);
  const children = new Map<string | null, MessageRow[]>();
  for (const row of shown) {
    const parent = row.parent_id !== null && parents.has(row.parent_id) ? row.parent_id : null;
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [row]);
    else siblings.push(row);
  }
  const nodes: TreeNodeView[] = [];
  // Depth-first without recursion: a long conversation is a long chain.
  const stack = [...(children.get(null) ?? [])].reverse();
  for (let row = stack.pop(); row !== undefined; row = stack.pop()) {
    const kids = children.get(row.id) ?? [];
    nodes.push({
      id: row.id,
      parentId: row.parent_id !== null && parents.has(row.parent_id) ? row.parent_id : null,
      role: row.role,
      text: preview(row.content),
      onPath: activePath.has(row.id),
      latestLeaf: row.id === latestLeafId,
      children: kids.length,
      compactedBy: coveredBy.get(row.id) ?? null,
    });
    for (const kid of [...kids].reverse()) stack.push(kid);
  }
  return { nodes, total, overlays };
}

/** The ids on the path root..leaf: the conversation as it continues now. */
function pathTo(leafId: string | null, parents: ReadonlyMap<string, string | null>): Set<string> {
  const path = new Set<string>();
  for (let id = leafId; id !== null && parents.has(id) && !path.has(id); id = parents.get(id) ?? null) {
    path.add(id);
  }
  return path;
}

/** The messages an overlay stands for: from its last message up the parents to its first. */
function overlayView(
  compaction: StoredCompaction,
  parents: ReadonlyMap<string, string | null>,
  activePath: ReadonlySet<string>,
): CompactionView {
  const messageIds: string[] = [];
  let id: string | null | undefined = compaction.toMessageId;
  while (id !== null && id !== undefined && messageIds.length <= parents.size) {
    messageIds.push(id);
    if (id === compaction.fromMessageId) break;
    id = parents.get(id);
  }
  const complete = messageIds.at(-1) === compaction.fromMessageId;
  return {
    id: compaction.id,
    fromMessageId: compaction.fromMessageId,
    toMessageId: compaction.toMessageId,
    summary: compaction.summary,
    createdAt: compaction.createdAt,
    messageIds: complete ? messageIds.reverse() : [],
    onActivePath: activePath.has(compaction.fromMessageId) && activePath.has(compaction.toMessageId),
  };
}

function countMessages(storage: DurableObjectStorage, sessionId: string): number {
  return storage.sql
    .exec<{ count: number }>(`SELECT count(*) AS count FROM ${messagesTable} WHERE session_id = ?`, sessionId)
    .one().count;
}

function preview(content: string): string {
  let text: string;
  try {
    text = messageText(JSON.parse(content) as SessionMessage);
  } catch {
    text = content;
  }
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH)}…` : text;
}
