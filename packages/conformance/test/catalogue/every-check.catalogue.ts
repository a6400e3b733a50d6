// Registers the suite so that every check runs (no capability missing, every option given): the source of
// the generated check list in the README (test/check-list.test.ts).
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
} from "@contextblocks/core/memory";
import { describeContextProvider, describeVersions } from "../../src/index.js";
import { NamespacedMemoryProvider } from "../memory-providers.js";

describeContextProvider("writable", () => new NamespacedMemoryProvider(), {
  capabilities: { writable: true, namespacing: true },
  reopen: (provider) => new NamespacedMemoryProvider(provider.store, provider.namespace),
  namespace: (provider, namespace) => new NamespacedMemoryProvider(provider.store, namespace),
});

describeContextProvider("searchable", () => new InMemorySearchProvider(), {
  capabilities: { searchable: true, writable: true, delete: true },
  reopen: (provider) => new InMemorySearchProvider({ store: provider.store }),
});

describeContextProvider("loadable", () => new InMemorySkillProvider({ versionRetention: 3 }), {
  capabilities: { loadable: true, writable: true, delete: true, versions: true },
  reopen: (provider) => new InMemorySkillProvider({ store: provider.store, versionRetention: 3 }),
  versionRetention: 3,
});

describeVersions("versions", () => new InMemoryContextProvider({ versionRetention: 3 }), {
  capabilities: { writable: true, versions: true },
  reopen: (provider) => new InMemoryContextProvider({ store: provider.store, versionRetention: 3 }),
  versionRetention: 3,
});
