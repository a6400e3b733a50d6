export { inMemoryBackend } from "./backend.js";
export { InMemoryRunStateStore } from "./run-state-store.js";
export { InMemorySessionRegistry } from "./session-registry.js";
export { InMemorySessionStore, InMemorySessions } from "./session-store.js";
