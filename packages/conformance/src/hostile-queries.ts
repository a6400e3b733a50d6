/** A query a model (or a user) may send that full-text engines read as syntax, or choke on. */
export interface HostileQuery {
  name: string;
  query: string;
}

function operatorSoup(size: number): string {
  return 'mango OR "papaya NEAR(smoothie * ^content: (AND -NOT) '.repeat(Math.ceil(size / 50)).slice(0, size);
}

function distinctWords(size: number): string {
  const words: string[] = [];
  let length = 0;
  for (let index = 0; length < size; index++) {
    const word = index === 500 ? "mango" : `word${index.toString(36)}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, size);
}

export const HOSTILE_QUERIES: readonly HostileQuery[] = [
  { name: "a lone double quote", query: '"' },
  { name: "an unbalanced double quote", query: '"unbalanced' },
  { name: "a quoted phrase", query: '"mango papaya"' },
  { name: "doubled double quotes", query: '""mango""' },
  { name: "a single quote", query: "o'brien" },
  { name: "a lone asterisk", query: "*" },
  { name: "a trailing asterisk", query: "mang*" },
  { name: "NEAR with arguments", query: "NEAR(mango papaya)" },
  { name: "NEAR with a distance", query: "NEAR(mango papaya, 2)" },
  { name: "an unclosed NEAR", query: "NEAR(" },
  { name: "AND alone", query: "AND" },
  { name: "OR alone", query: "OR" },
  { name: "NOT alone", query: "NOT" },
  { name: "only operators", query: "AND OR NOT NEAR" },
  { name: "a trailing operator", query: "mango AND" },
  { name: "a leading operator", query: "OR mango" },
  { name: "NOT between words", query: "mango NOT papaya" },
  { name: "an opening parenthesis", query: "(mango" },
  { name: "a closing parenthesis", query: "mango)" },
  { name: "empty parentheses", query: "()" },
  { name: "a lone colon", query: ":" },
  { name: "a column filter", query: "content:" },
  { name: "a column filter and a word", query: "content: mango" },
  { name: "a filter on another column", query: "label:notes" },
  { name: "a column set", query: "{content key}: mango" },
  { name: "a lone caret", query: "^" },
  { name: "a caret before a word", query: "^mango" },
  { name: "a lone minus", query: "-" },
  { name: "a leading minus", query: "-papaya mango" },
  { name: "a leading plus", query: "+mango" },
  { name: "SQL", query: "'); DROP TABLE cf_agents_search_fts; --" },
  { name: "LIKE wildcards", query: "%_%" },
  { name: "a backslash", query: "\\" },
  { name: "brackets and braces", query: "[mango] {papaya}" },
  { name: "the empty string", query: "" },
  { name: "whitespace only", query: " \t\n\r " },
  { name: "control characters", query: "\u0000mango\u0007\u001b[0m\u007f" },
  { name: "a NUL character only", query: "\u0000" },
  { name: "emoji", query: "🥭 mango 🍹" },
  { name: "a 10 kB query of operators and quotes", query: operatorSoup(10_240) },
  { name: "a 10 kB query of distinct words", query: distinctWords(10_240) },
];
