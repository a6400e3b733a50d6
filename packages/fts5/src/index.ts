export {
  type Fts5EntryOptions,
  Fts5SearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
