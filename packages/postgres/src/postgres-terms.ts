import type { QueryPlan } from "@contextblocks/text";
import { indexableText } from "./text-checks.js";

/**
 * The plan a Postgres search runs: its terms, then the query's compounds (e-mail addresses, host names, URLs,
 * paths, version numbers: `QueryPlan.compounds`) as terms of their own. The search fields take a compound apart
 * into its words (folded-words.ts), so its terms find it; but where they have not been rebuilt so (a knowledge
 * table before its first write, a database that is not UTF8, Postgres 12) Postgres' parser indexed it as one
 * lexeme, which only the compound itself finds. A compound is asked for as written (its `word`; nothing to fold), with NUL and lone
 * surrogates replaced as in the text a message is indexed by (`indexableText`): a compound is cut from the query
 * by whitespace, not into words, so it may hold them, and Postgres refuses NUL in any text.
 */
export function withCompounds(plan: QueryPlan): QueryPlan {
  const compounds = plan.compounds ?? [];
  if (compounds.length === 0) return plan;
  return {
    ...plan,
    terms: [
      ...plan.terms,
      ...compounds.map((compound) => {
        const word = indexableText(compound);
        return { word, stem: word };
      }),
    ],
  };
}
