// Session stores broken in one way each: the suite must fail them for that reason.
import { InMemorySessions } from "@contextblocks/sessions/memory";
import type { ConformanceMessage } from "../../src/index.js";
import { describeSessionStore } from "../../src/index.js";
import { WrappedStore } from "./wrapped-store.js";

/** Ignores parentId: every message goes under the latest leaf, so no branch is ever made. */
class IgnoresParent extends WrappedStore {
  override appendMessage(message: ConformanceMessage): Promise<unknown> {
    return super.appendMessage(message);
  }
}

/** Returns overlays but never applies them on read: the path is walked from the leaf, as stored. */
class IgnoresOverlays extends WrappedStore {
  override async getHistory(leafId?: string | null) {
    const path: ConformanceMessage[] = [];
    let id = leafId ?? (await this.inner.getLatestLeaf())?.id ?? null;
    while (id !== null) {
      const [node, message] = await Promise.all([this.inner.getNode(id), this.inner.getMessage(id)]);
      if (node === null || message === null) break;
      path.unshift(message);
      id = node.parentId;
    }
    return path;
  }
}

/** Every session id shares one session: messages leak between sessions. */
class SharesSessions extends WrappedStore {
  constructor(sessions?: InMemorySessions, _sessionId = "") {
    super(sessions, "");
  }
}

/** Overwrites an existing id instead of refusing it. */
class OverwritesIds extends WrappedStore {
  override async appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<void> {
    await this.inner.deleteMessages([message.id]);
    await super.appendMessage(message, parentId);
  }
}

/** Refuses every stored id, even an identical retry of an append whose write landed. */
class RefusesRetries extends WrappedStore {
  override async appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<unknown> {
    if ((await this.inner.getMessage(message.id)) !== null) {
      throw Object.assign(new Error(`"${message.id}" is stored`), { code: "INVALID_INPUT" });
    }
    return super.appendMessage(message, parentId);
  }
}

/** Keeps ids apart per session (one `InMemorySessions` each): an id may be stored in two sessions. */
class RepeatsIdsAcrossSessions extends WrappedStore {
  static readonly #apart = new WeakMap<InMemorySessions, Map<string, InMemorySessions>>();

  constructor(sessions = new InMemorySessions(), sessionId = "") {
    const bySession = RepeatsIdsAcrossSessions.#apart.get(sessions) ?? new Map<string, InMemorySessions>();
    RepeatsIdsAcrossSessions.#apart.set(sessions, bySession);
    const own = bySession.get(sessionId) ?? new InMemorySessions();
    bySession.set(sessionId, own);
    super(own, sessionId);
    // Other sessions and restarts are made from the shared data, not this session's own.
    Object.defineProperty(this, "sessions", { value: sessions });
  }
}

/** Stores text parts cut to 65,535 characters. */
class TruncatesParts extends WrappedStore {
  override appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<unknown> {
    const parts = message.parts.map((part) =>
      part.text ? { ...part, text: part.text.slice(0, 65_535) } : part,
    );
    return super.appendMessage({ ...message, parts }, parentId);
  }
}

/** Reads the latest leaf, then pauses before writing: concurrent appends fork the conversation. */
class RacesAppends extends WrappedStore {
  override async appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<void> {
    const parent = parentId === undefined ? ((await this.inner.getLatestLeaf())?.id ?? null) : parentId;
    await new Promise((resolve) => setTimeout(resolve, 1));
    await super.appendMessage(message, parent);
  }
}

/** Has importMessage, but stores the message under the latest leaf with the time of the import. */
class ImportsUnderLeaf extends WrappedStore {
  async importMessage(
    message: ConformanceMessage,
    _parentId: string | null,
    _createdAt: string,
  ): Promise<void> {
    await this.inner.appendMessage(message);
  }
}

/** Has getPathNodes, but leaves the root out of the path. */
class PathWithoutRoot extends WrappedStore {
  async getPathNodes(leafId?: string | null) {
    return (await this.inner.getPathNodes(leafId)).slice(1);
  }
}

const options = <P extends WrappedStore>(make: (sessions?: InMemorySessions, id?: string) => P) => ({
  capabilities: { search: true, tree: true },
  session: (store: P, sessionId: string) => make(store.sessions, sessionId),
  reopen: (store: P) => make(store.sessions, store.sessionId),
  largePartSize: 100_000,
});

describeSessionStore(
  "ignores parent",
  () => new IgnoresParent(),
  options((sessions, id) => new IgnoresParent(sessions, id)),
);
describeSessionStore(
  "ignores overlays",
  () => new IgnoresOverlays(),
  options((sessions, id) => new IgnoresOverlays(sessions, id)),
);
describeSessionStore(
  "shares sessions",
  () => new SharesSessions(),
  options((sessions, id) => new SharesSessions(sessions, id)),
);
describeSessionStore(
  "overwrites ids",
  () => new OverwritesIds(),
  options((sessions, id) => new OverwritesIds(sessions, id)),
);
describeSessionStore(
  "refuses retries",
  () => new RefusesRetries(),
  options((sessions, id) => new RefusesRetries(sessions, id)),
);
describeSessionStore(
  "repeats ids across sessions",
  () => new RepeatsIdsAcrossSessions(),
  options((sessions, id) => new RepeatsIdsAcrossSessions(sessions, id)),
);
describeSessionStore(
  "truncates parts",
  () => new TruncatesParts(),
  options((sessions, id) => new TruncatesParts(sessions, id)),
);
describeSessionStore(
  "races appends",
  () => new RacesAppends(),
  options((sessions, id) => new RacesAppends(sessions, id)),
);
describeSessionStore(
  "imports under the leaf",
  () => new ImportsUnderLeaf(),
  options((sessions, id) => new ImportsUnderLeaf(sessions, id)),
);
describeSessionStore(
  "path without root",
  () => new PathWithoutRoot(),
  options((sessions, id) => new PathWithoutRoot(sessions, id)),
);
