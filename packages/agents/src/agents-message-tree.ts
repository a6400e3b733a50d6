import type { SessionMessage } from "@contextblocks/sessions";
import { MessageTree, type RecentHistoryResult } from "@contextblocks/sessions/store-kit";

/**
 * The leaf agents@0.22.0 reads for `leafId`: it tests the id for truth (`leafId ? … : latest leaf`), so `""`
 * reads the latest leaf there, where contextblocks' own reads refuse an empty id.
 */
export function agentsLeafId<T>(leafId: T): T | undefined {
  return leafId === "" ? undefined : leafId;
}

/**
 * The message tree with agents@0.22.0's provider reads: `getHistory`, `getPathLength` and
 * `getRecentHistory` take `""` for the latest leaf, as agents' providers do. What the drop-in providers
 * (`AgentSessionProvider`, `PostgresSessionProvider`) are built on.
 */
export class AgentsMessageTree extends MessageTree {
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
