// Session providers broken in one way each: the suite must fail them for that reason.
import type { ConformanceMessage } from "../../src/index.js";
import { describeSessionProvider } from "../../src/index.js";
import { MemorySessionProvider, type MemorySessionStore } from "./memory-session-provider.js";

/** Ignores parentId: every message goes under the latest leaf, so no branch is ever made. */
class IgnoresParent extends MemorySessionProvider {
  override appendMessage(message: ConformanceMessage): void {
    super.appendMessage(message);
  }
}

/** Returns overlays but never applies them on read. */
class IgnoresOverlays extends MemorySessionProvider {
  protected override applyOverlays(path: ConformanceMessage[]): ConformanceMessage[] {
    return path;
  }
}

/** Every session id shares one session: messages leak between sessions. */
class SharesSessions extends MemorySessionProvider {
  constructor(store?: MemorySessionStore, _sessionId = "") {
    super(store, "");
  }
}

/** Overwrites an existing id instead of refusing it. */
class OverwritesIds extends MemorySessionProvider {
  override appendMessage(message: ConformanceMessage, parentId?: string | null): void {
    this.data.messages.delete(message.id);
    super.appendMessage(message, parentId);
  }
}

/** Stores text parts cut to 65,535 characters. */
class TruncatesParts extends MemorySessionProvider {
  override appendMessage(message: ConformanceMessage, parentId?: string | null): void {
    const parts = message.parts.map((part) =>
      part.text ? { ...part, text: part.text.slice(0, 65_535) } : part,
    );
    super.appendMessage({ ...message, parts }, parentId);
  }
}

/** Reads the latest leaf asynchronously before writing: concurrent appends fork the conversation. */
class RacesAppends extends MemorySessionProvider {
  override async appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<void> {
    const parent = parentId === undefined ? this.latestLeafId() : parentId;
    await new Promise((resolve) => setTimeout(resolve, 1));
    super.appendMessage(message, parent);
  }
}

const options = <P extends MemorySessionProvider>(make: (store?: MemorySessionStore, id?: string) => P) => ({
  capabilities: { search: true },
  session: (provider: P, sessionId: string) => make(provider.store, sessionId),
  reopen: (provider: P) => make(provider.store, provider.sessionId),
  largePartSize: 100_000,
});

describeSessionProvider(
  "ignores parent",
  () => new IgnoresParent(),
  options((store, id) => new IgnoresParent(store, id)),
);
describeSessionProvider(
  "ignores overlays",
  () => new IgnoresOverlays(),
  options((store, id) => new IgnoresOverlays(store, id)),
);
describeSessionProvider(
  "shares sessions",
  () => new SharesSessions(),
  options((store, id) => new SharesSessions(store, id)),
);
describeSessionProvider(
  "overwrites ids",
  () => new OverwritesIds(),
  options((store, id) => new OverwritesIds(store, id)),
);
describeSessionProvider(
  "truncates parts",
  () => new TruncatesParts(),
  options((store, id) => new TruncatesParts(store, id)),
);
describeSessionProvider(
  "races appends",
  () => new RacesAppends(),
  options((store, id) => new RacesAppends(store, id)),
);
