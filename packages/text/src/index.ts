export { asksWhen, datePatterns, mentionsDate } from "./date-expressions.js";
export { fts5MatchExpression, fts5String, type MatchExpressionOptions } from "./fts5-match.js";
export { heldStems } from "./held-stems.js";
export {
  dayWords,
  type MessageFieldSource,
  type MessageFields,
  messageFieldsOf,
  monthNames,
} from "./message-fields.js";
export {
  maximumPhraseWords,
  maximumQueryCharacters,
  maximumTerms,
  minimumTermsForPairs,
  planQuery,
  type QueryPlan,
  type QueryTerm,
} from "./plan.js";
export { porterStem } from "./porter.js";
export { searchableText, writtenText } from "./searchable-text.js";
export { isStopword, stopwords } from "./stopwords.js";
export { foldToken, type Token, tokenize } from "./tokenize.js";
export { type TsqueryInputs, tsqueryInputs, writtenPair } from "./tsquery.js";
