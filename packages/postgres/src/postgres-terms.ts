import type { QueryPlan } from "@contextblocks/text";

/**
 * The plan a Postgres search runs: its terms, then the query's compounds (e-mail addresses, host names, URLs,
 * paths, version numbers: `QueryPlan.compounds`) as terms of their own. Postgres' parser indexes each compound
 * as one lexeme and not as the words `planQuery` cut it into, so without it "john@example.com" would find none
 * of the texts that hold it. A compound is asked for as written (its `word`; nothing to fold).
 */
export function withCompounds(plan: QueryPlan): QueryPlan {
  const compounds = plan.compounds ?? [];
  if (compounds.length === 0) return plan;
  return {
    ...plan,
    terms: [...plan.terms, ...compounds.map((compound) => ({ word: compound, stem: compound }))],
  };
}
