import { isContextError } from "@contextblocks/core";
import type { SessionMessage } from "@contextblocks/sessions";
import {
  type AppendedMessage,
  MessageTree,
  type RecentHistoryResult,
} from "@contextblocks/sessions/store-kit";

/**
 * The leaf agents@0.22.0 reads for `leafId`: it tests the id for truth (`leafId ? … : latest leaf`), so `""`
 * reads the latest leaf there, where contextblocks' own reads refuse an empty id.
 */
export function agentsLeafId<T>(leafId: T): T | undefined {
  return leafId === "" ? undefined : leafId;
}

/**
 * True when an append that failed with `error` was of a message whose id the session already holds: agents'
 * `SessionProvider` contract makes that append a no-op ("Idempotent — appending the same `message.id` twice is
 * a no-op"; the first message is kept), where contextblocks refuses anything but an identical retry. An id
 * another session holds is still refused (agents' insert fails on its primary key there).
 */
export async function isHeldAlready(
  store: { getMessage(id: string): Promise<SessionMessage | null> },
  message: unknown,
  error: unknown,
): Promise<boolean> {
  if (!isContextError(error) || (error.code !== "INVALID_INPUT" && error.code !== "NOT_FOUND")) return false;
  const id = (message as { id?: unknown } | null | undefined)?.id;
  if (typeof id !== "string" || id === "") return false;
  try {
    return (await store.getMessage(id)) !== null;
  } catch {
    return false;
  }
}

/**
 * The message tree with agents@0.22.0's provider reads: `getHistory`, `getPathLength` and
 * `getRecentHistory` take `""` for the latest leaf, as agents' providers do, and appending an id the session
 * already holds is a no-op. What the drop-in providers (`AgentSessionProvider`, `PostgresSessionProvider`)
 * are built on.
 */
export class AgentsMessageTree extends MessageTree {
  /** As agents' providers: appending an id the session already holds is a no-op (the first is kept). */
  override async appendMessage(message: SessionMessage, parentId?: string | null): Promise<AppendedMessage> {
    try {
      return await super.appendMessage(message, parentId);
    } catch (error) {
      if (!(await isHeldAlready(this, message, error))) throw error;
      const node = await this.getNode(message.id);
      return { parentId: node?.parentId ?? null, createdAt: node?.createdAt ?? null };
    }
  }

  override getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return super.getHistory(agentsLeafId(leafId));
  }

  override getPathLength(leafId?: string | null): Promise<number> {
    return super.getPathLength(agentsLeafId(leafId));
  }

  override getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages?: number,
  ): Promise<RecentHistoryResult> {
    return super.getRecentHistory(agentsLeafId(leafId), maxBytes, minMessages);
  }
}
