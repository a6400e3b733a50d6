import type { ConformanceMessage, SessionProviderUnderTest } from "../../src/index.js";

interface StoredMessage {
  message: ConformanceMessage;
  parentId: string | null;
  order: number;
}

interface Overlay {
  id: string;
  summary: string;
  fromMessageId: string;
  toMessageId: string;
}

/** The backing store: sessions by id, shared by every instance made on it. */
export class MemorySessionStore {
  readonly sessions = new Map<string, { messages: Map<string, StoredMessage>; overlays: Overlay[] }>();
  order = 0;

  session(id: string) {
    let session = this.sessions.get(id);
    if (!session) {
      session = { messages: new Map(), overlays: [] };
      this.sessions.set(id, session);
    }
    return session;
  }
}

/**
 * A reference session provider in memory, for the suite's tests of itself. Messages are copied in and
 * out through JSON, as a database would store them.
 */
export class MemorySessionProvider implements SessionProviderUnderTest {
  constructor(
    readonly store = new MemorySessionStore(),
    readonly sessionId = "",
  ) {}

  protected get data() {
    return this.store.session(this.sessionId);
  }

  getMessage(id: string): ConformanceMessage | null {
    const stored = this.data.messages.get(id);
    return stored ? copy(stored.message) : null;
  }

  getHistory(leafId?: string | null): ConformanceMessage[] {
    const leaf = leafId ?? this.latestLeafId();
    if (leaf === null || !this.data.messages.has(leaf)) return [];
    const path: ConformanceMessage[] = [];
    for (let id: string | null = leaf; id !== null; ) {
      const stored = this.data.messages.get(id);
      if (!stored) break;
      path.unshift(copy(stored.message));
      id = stored.parentId;
    }
    return this.applyOverlays(path);
  }

  protected applyOverlays(path: ConformanceMessage[]): ConformanceMessage[] {
    const result: ConformanceMessage[] = [];
    for (let index = 0; index < path.length; index++) {
      const overlay = [...this.data.overlays]
        .reverse()
        .find((candidate) => candidate.fromMessageId === path[index]?.id);
      const end = overlay ? path.findIndex((message) => message.id === overlay.toMessageId) : -1;
      if (overlay && end >= index) {
        result.push({
          id: `compaction_${overlay.id}`,
          role: "assistant",
          parts: [{ type: "text", text: overlay.summary }],
        });
        index = end;
      } else result.push(path[index] as ConformanceMessage);
    }
    return result;
  }

  getLatestLeaf(): ConformanceMessage | null {
    const leaf = this.latestLeafId();
    return leaf === null ? null : this.getMessage(leaf);
  }

  getBranches(messageId: string): ConformanceMessage[] {
    return [...this.data.messages.values()]
      .filter((stored) => stored.parentId === messageId)
      .sort((left, right) => left.order - right.order)
      .map((stored) => copy(stored.message));
  }

  getPathLength(leafId?: string | null): number {
    const leaf = leafId ?? this.latestLeafId();
    let length = 0;
    for (let id: string | null = leaf; id !== null; ) {
      const stored = this.data.messages.get(id);
      if (!stored) break;
      length++;
      id = stored.parentId;
    }
    return length;
  }

  appendMessage(message: ConformanceMessage, parentId?: string | null): void {
    if (this.data.messages.has(message.id)) throw new Error(`message "${message.id}" exists`);
    const parent = parentId === undefined ? this.latestLeafId() : parentId;
    if (parent !== null && !this.data.messages.has(parent)) throw new Error(`parent "${parent}" not found`);
    this.data.messages.set(message.id, {
      message: copy(message),
      parentId: parent,
      order: this.store.order++,
    });
  }

  updateMessage(message: ConformanceMessage): void {
    const stored = this.data.messages.get(message.id);
    if (stored) stored.message = copy(message);
  }

  deleteMessages(messageIds: string[]): void {
    for (const id of messageIds) this.data.messages.delete(id);
  }

  clearMessages(): void {
    this.data.messages.clear();
    this.data.overlays.length = 0;
  }

  addCompaction(summary: string, fromMessageId: string, toMessageId: string): Overlay {
    const overlay = { id: String(this.store.order++), summary, fromMessageId, toMessageId };
    this.data.overlays.push(overlay);
    return overlay;
  }

  getCompactions(): Overlay[] {
    return this.data.overlays.map((overlay) => ({ ...overlay }));
  }

  searchMessages(query: string, limit = 10): { id: string; role: string; content: string }[] {
    const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    if (words.length === 0) return [];
    return [...this.data.messages.values()]
      .map((stored) => ({
        id: stored.message.id,
        role: stored.message.role,
        content: stored.message.parts
          .flatMap((part) => (part.type === "text" && part.text ? [part.text] : []))
          .join(" "),
      }))
      .filter((hit) => {
        const have = new Set(hit.content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
        return words.some((word) => have.has(word));
      })
      .slice(0, limit);
  }

  protected latestLeafId(): string | null {
    let latest: StoredMessage | null = null;
    const parents = new Set([...this.data.messages.values()].map((stored) => stored.parentId));
    for (const stored of this.data.messages.values()) {
      if (parents.has(stored.message.id)) continue;
      if (!latest || stored.order > latest.order) latest = stored;
    }
    return latest?.message.id ?? null;
  }
}

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
