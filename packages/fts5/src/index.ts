export {
  Fts5SearchProvider,
  Fts5SearchProvider as AgentSearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
export {
  fts5MatchExpression,
  type MatchExpressionOptions,
  planQuery,
  type QueryPlan,
  type QueryTerm,
} from "./query.js";
