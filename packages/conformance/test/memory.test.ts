import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "@contextblocks/core/memory";
import {
  describeContextProvider,
  describeEntryVersions,
  describeSearchable,
  describeVersions,
} from "../src/index.js";
import { MemoryReadOnlyProvider, NamespacedMemoryProvider } from "./memory-providers.js";

describeContextProvider("InMemoryContextProvider", () => new InMemoryContextProvider(), {
  capabilities: { writable: true, versions: true },
  reopen: (provider) => new InMemoryContextProvider({ store: provider.store }),
});

describeVersions(
  "InMemoryContextProvider keeping 3 versions",
  () => new InMemoryContextProvider({ versionRetention: 3 }),
  {
    capabilities: { writable: true, versions: true },
    reopen: (provider) => new InMemoryContextProvider({ store: provider.store, versionRetention: 3 }),
    versionRetention: 3,
  },
);

describeContextProvider("InMemorySearchProvider", () => new InMemorySearchProvider(), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new InMemorySearchProvider({ store: provider.store }),
});

describeContextProvider("InMemorySkillProvider", () => new InMemorySkillProvider(), {
  capabilities: { loadable: true, writable: true, delete: true, versions: true },
  reopen: (provider) => new InMemorySkillProvider({ store: provider.store }),
});

describeEntryVersions(
  "InMemorySkillProvider keeping 3 versions per entry",
  () => new InMemorySkillProvider({ versionRetention: 3 }),
  {
    capabilities: { loadable: true, writable: true, delete: true, versions: true },
    reopen: (provider) => new InMemorySkillProvider({ store: provider.store, versionRetention: 3 }),
    versionRetention: 3,
  },
);

describeContextProvider("read-only provider over a InMemoryStore", () => new MemoryReadOnlyProvider(), {
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
describeSearchable("InMemorySearchProvider with limit 3", () => new InMemorySearchProvider({ limit: 3 }), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new InMemorySearchProvider({ store: provider.store, limit: 3 }),
  searchLimit: 3,
});

// Providers built on one shared store from the start (the factory still isolates: a new store per call).
describeContextProvider(
  "InMemoryContextProvider on a fresh InMemoryStore",
  () => new InMemoryContextProvider({ store: new InMemoryStore() }),
  { capabilities: { writable: true, versions: true } },
);
