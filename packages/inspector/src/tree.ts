import { clipped } from "@contextblocks/core/store-kit";
import type { MessageNode, SessionMessage, StoredCompaction } from "@contextblocks/sessions";
import type { SessionStore } from "@contextblocks/sessions/store-kit";

/** One stored message in its session's tree. */
export interface TreeNodeView {
  id: string;
  /** `null` for a root. */
  parentId: string | null;
  role: string;
  /** Its text and tool calls, clipped. */
  text: string;
  /** On the path root..latest leaf: the conversation as the next turn continues it. */
  onPath: boolean;
  latestLeaf: boolean;
  /** How many messages follow it; more than one is a branch point. */
  children: number;
  /** The overlay whose summary stands for this message in the history, if any. */
  compactedBy: string | null;
}

/** A compaction overlay: the messages `fromMessageId..toMessageId` read as one summary. */
export interface CompactionView {
  id: string;
  fromMessageId: string;
  toMessageId: string;
  summary: string;
  createdAt: string;
  /** The messages it covers, in order (empty when they are not all in the tree shown). */
  messageIds: string[];
  /** Both ends on the active path: the history sent to the model shows the summary. */
  onActivePath: boolean;
}
/** Characters of a message shown in the tree. */
const PREVIEW_LENGTH = 280;

/**
 * Every message of a session, branches included, in tree order (a parent before its children, older
 * children first). `getHistory` reads one path; the inspector shows the whole tree, so it reads the tree
 * from the session's store (`getTree`: each message's place, in the order they were stored) and each
 * shown message's text (`getMessage`).
 */
export async function readTree(
  store: SessionStore,
  latestLeafId: string | null,
  compactions: readonly StoredCompaction[],
  limit: number,
): Promise<{ nodes: TreeNodeView[]; total: number; overlays: CompactionView[] }> {
  const stored = await store.getTree({ limit: limit + 1 });
  const total = stored.length > limit ? (await store.getTree()).length : stored.length;
  const shown = stored.slice(0, limit);
  const texts = new Map<string, string>();
  for (const node of shown) {
    const message = await store.getMessage(node.id);
    texts.set(node.id, message === null ? "" : preview(message));
  }
  const parents = new Map(shown.map((node) => [node.id, node.parentId]));
  const activePath = pathTo(latestLeafId, parents);
  const overlays = compactions.map((compaction) => overlayView(compaction, parents, activePath));
  const coveredBy = new Map<string, string>();
  for (const overlay of overlays) for (const id of overlay.messageIds) coveredBy.set(id, overlay.id);
  const children = new Map<string | null, MessageNode[]>();
  for (const node of shown) {
    const parent = node.parentId !== null && parents.has(node.parentId) ? node.parentId : null;
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [node]);
    else siblings.push(node);
  }
  const nodes: TreeNodeView[] = [];
  // Depth-first without recursion: a long conversation is a long chain.
  const stack = [...(children.get(null) ?? [])].reverse();
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const kids = children.get(node.id) ?? [];
    nodes.push({
      id: node.id,
      parentId: node.parentId !== null && parents.has(node.parentId) ? node.parentId : null,
      role: node.role,
      text: texts.get(node.id) ?? "",
      onPath: activePath.has(node.id),
      latestLeaf: node.id === latestLeafId,
      children: kids.length,
      compactedBy: coveredBy.get(node.id) ?? null,
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

/** The message's text, clipped without splitting a surrogate pair (the snapshot's JSON stays well-formed). */
function preview(message: SessionMessage): string {
  return clipped(messageText(message), PREVIEW_LENGTH);
}

/** A message's text parts, and its tool calls as `[tool name]`. */
function messageText(message: SessionMessage): string {
  return message.parts
    .map((part) => {
      if (typeof part.text === "string") return part.text;
      if (typeof part.type === "string" && part.type.startsWith("tool-")) return `[${part.type.slice(5)}]`;
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}
