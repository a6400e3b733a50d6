export {
  Fts5SearchProvider,
  Fts5SearchProvider as AgentSearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
export { matchExpression, planQuery, type QueryPlan, type QueryTerm, quote } from "./query.js";
export { type Candidate, inverseDocumentFrequency, rerank } from "./rank.js";
export { indexTable, legacyTable, scopesTable, termsTable, writesView } from "./schema.js";
