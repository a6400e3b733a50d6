export { InMemorySearchProvider } from "./search.js";
export { InMemorySkillProvider } from "./skills.js";
export { InMemoryStore } from "./store.js";
export { InMemoryContextProvider, type InMemoryContextProviderOptions } from "./writable.js";
