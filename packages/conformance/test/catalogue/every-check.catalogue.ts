// Registers the suite so that every check runs (no capability missing, every option given): the source of
// the generated check list in the README (test/check-list.test.ts).
import { MemorySearchProvider, MemorySkillProvider } from "@contextblocks/core/memory";
import { describeContextProvider } from "../../src/index.js";
import { NamespacedMemoryProvider } from "../memory-providers.js";

describeContextProvider("writable", () => new NamespacedMemoryProvider(), {
  capabilities: { writable: true, namespacing: true },
  reopen: (provider) => new NamespacedMemoryProvider(provider.store, provider.namespace),
  namespace: (provider, namespace) => new NamespacedMemoryProvider(provider.store, namespace),
});

describeContextProvider("searchable", () => new MemorySearchProvider(), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new MemorySearchProvider({ store: provider.store }),
});

describeContextProvider("loadable", () => new MemorySkillProvider(), {
  capabilities: { loadable: true, writable: true, delete: true },
  reopen: (provider) => new MemorySkillProvider({ store: provider.store }),
});
