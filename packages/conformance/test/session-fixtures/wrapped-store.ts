import type { MessageNode, SearchResult, SessionMessage, StoredCompaction } from "@contextblocks/sessions";
import { InMemorySessionStore, InMemorySessions } from "@contextblocks/sessions/memory";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import type { ConformanceMessage, SessionStoreUnderTest } from "../../src/index.js";

/**
 * `InMemorySessionStore` of `@contextblocks/sessions/memory` behind a wrapper that broken fixtures
 * override one method of. Every wrapper on the same `InMemorySessions` shares its data (a restart).
 */
export class WrappedStore implements SessionStoreUnderTest {
  protected readonly inner: MessageTree;

  constructor(
    readonly sessions = new InMemorySessions(),
    readonly sessionId = "",
  ) {
    this.inner = new MessageTree(new InMemorySessionStore({ sessionId, sessions }));
  }

  getMessage(id: string): Promise<SessionMessage | null> {
    return this.inner.getMessage(id);
  }
  getHistory(leafId?: string | null): Promise<ConformanceMessage[]> {
    return this.inner.getHistory(leafId);
  }
  getLatestLeaf(): Promise<SessionMessage | null> {
    return this.inner.getLatestLeaf();
  }
  getBranches(messageId: string): Promise<SessionMessage[]> {
    return this.inner.getBranches(messageId);
  }
  getPathLength(leafId?: string | null) {
    return this.inner.getPathLength(leafId);
  }
  getNode(id: string): Promise<MessageNode | null> {
    return this.inner.getNode(id);
  }
  getTree(options?: { limit?: number }): Promise<MessageNode[]> {
    return this.inner.getTree(options);
  }
  appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<unknown> {
    return this.inner.appendMessage(message, parentId);
  }
  updateMessage(message: ConformanceMessage) {
    return this.inner.updateMessage(message);
  }
  deleteMessages(messageIds: string[]) {
    return this.inner.deleteMessages(messageIds);
  }
  clearMessages() {
    return this.inner.clearMessages();
  }
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): Promise<StoredCompaction> {
    return this.inner.addCompaction(summary, fromMessageId, toMessageId);
  }
  getCompactions(): Promise<StoredCompaction[]> {
    return this.inner.getCompactions();
  }
  searchMessages(query: string, limit?: number): Promise<SearchResult[]> {
    return (this.inner.searchMessages as NonNullable<MessageTree["searchMessages"]>)(query, limit);
  }
}
