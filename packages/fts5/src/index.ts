export {
  type Fts5EntryOptions,
  Fts5SearchProvider,
  Fts5SearchProvider as AgentSearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
