import { InMemorySessionStore, type InMemorySessions } from "../src/memory/index.js";
import { MessageTree } from "../src/store-kit.js";

/** The in-memory store read through the message tree: what a `Session` on it reads and writes. */
export class MemoryTree extends MessageTree {
  declare readonly storage: InMemorySessionStore;

  constructor(options: { sessionId?: string; sessions?: InMemorySessions } = {}) {
    super(new InMemorySessionStore(options));
  }
}
