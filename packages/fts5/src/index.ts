export {
  Fts5SearchProvider,
  Fts5SearchProvider as AgentSearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
export { planQuery, type QueryPlan, type QueryTerm } from "./query.js";
export { indexTable, legacyTable, scopesTable, termsTable, writesView } from "./schema.js";
