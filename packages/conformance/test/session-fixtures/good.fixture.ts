// The reference session provider: must pass every group.
import { describeSessionProvider } from "../../src/index.js";
import { MemorySessionProvider } from "./memory-session-provider.js";

describeSessionProvider("good session provider", () => new MemorySessionProvider(), {
  capabilities: { search: true },
  session: (provider, sessionId) => new MemorySessionProvider(provider.store, sessionId),
  reopen: (provider) => new MemorySessionProvider(provider.store, provider.sessionId),
  largePartSize: 100_000,
});
