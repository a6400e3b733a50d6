import {
  MemoryContextProvider,
  MemorySearchProvider,
  MemorySkillProvider,
  MemoryStore,
} from "@contextblocks/core/memory";
import { describeContextProvider, describeSearchable } from "../src/index.js";
import { MemoryReadOnlyProvider, NamespacedMemoryProvider } from "./memory-providers.js";

describeContextProvider("MemoryContextProvider", () => new MemoryContextProvider(), {
  capabilities: { writable: true },
  reopen: (provider) => new MemoryContextProvider({ store: provider.store }),
});

describeContextProvider("MemorySearchProvider", () => new MemorySearchProvider(), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new MemorySearchProvider({ store: provider.store }),
});

describeContextProvider("MemorySkillProvider", () => new MemorySkillProvider(), {
  capabilities: { loadable: true, writable: true, delete: true },
  reopen: (provider) => new MemorySkillProvider({ store: provider.store }),
});

describeContextProvider("read-only provider over a MemoryStore", () => new MemoryReadOnlyProvider(), {
  capabilities: {},
  reopen: (provider) => new MemoryReadOnlyProvider(provider.store),
  seed: (provider, content) => {
    provider.store.blocks.set(provider.label, content);
  },
});

describeContextProvider("namespaced writable provider", () => new NamespacedMemoryProvider(), {
  capabilities: { writable: true, namespacing: true },
  reopen: (provider) => new NamespacedMemoryProvider(provider.store, provider.namespace),
  namespace: (provider, namespace) => new NamespacedMemoryProvider(provider.store, namespace),
});

// One group on its own, with a provider-specific option: a search limit other than the default.
describeSearchable("MemorySearchProvider with limit 3", () => new MemorySearchProvider({ limit: 3 }), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new MemorySearchProvider({ store: provider.store, limit: 3 }),
  searchLimit: 3,
});

// Providers built on one shared store from the start (the factory still isolates: a new store per call).
describeContextProvider(
  "MemoryContextProvider on a fresh MemoryStore",
  () => new MemoryContextProvider({ store: new MemoryStore() }),
  { capabilities: { writable: true } },
);
