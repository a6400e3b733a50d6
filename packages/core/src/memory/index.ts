export { InMemorySearchProvider } from "./search.js";
export { InMemorySkillProvider } from "./skills.js";
export { type InMemoryEntry, type InMemoryProviderOptions, InMemoryStore } from "./store.js";
export {
  DEFAULT_HISTORY_RETENTION,
  InMemoryContextProvider,
  type InMemoryContextProviderOptions,
} from "./writable.js";
