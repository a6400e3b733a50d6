export { MemorySearchProvider } from "./search.js";
export { MemorySkillProvider } from "./skills.js";
export { type MemoryEntry, type MemoryProviderOptions, MemoryStore } from "./store.js";
export { MemoryContextProvider } from "./writable.js";
