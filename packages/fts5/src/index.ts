// Re-exported until postgres and sessions import @contextblocks/text (the query planning moved there).
export { fts5MatchExpression, planQuery, type QueryPlan } from "@contextblocks/text";
export {
  Fts5SearchProvider,
  Fts5SearchProvider as AgentSearchProvider,
  type Fts5SearchProviderOptions,
} from "./provider.js";
