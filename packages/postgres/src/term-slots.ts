import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { monthNames, type QueryPlan, writtenPair } from "@contextblocks/text";
import { writtenOr } from "./written-query.js";

/**
 * The term queries of a session search (message-search-statement.ts): its terms, then its adjacent pairs, each a
 * slot of the statement, padded with empty slots up to the next of a few counts. The statement's text depends
 * only on its number of slots, so LoCoMo's 997 questions make 11 texts where one per count of terms and pairs
 * made 42: fewer named prepared statements per connection, each planned for its values (a custom plan) on its
 * first five runs only. An empty slot tests nothing: its query is NULL (`plainto_tsquery` and
 * `phraseto_tsquery` are strict, so nothing is parsed and no notice is raised), a field tested against it is
 * NULL, not true, so no row holds it and it adds 0 to every score, after the real terms.
 */
export interface TermSlot {
  /** The words asked for (`null` in an empty slot). */
  readonly folded: string | null;
  /** The words as the query wrote them, where folding changed more than ASCII case (`writtenOr`). */
  readonly written: string | null;
  /** Whether the words are a phrase (`phraseto_tsquery`, a pair) or words (`plainto_tsquery`, a term). */
  readonly phrase: boolean;
  /** Whether the day field could hold it (`mayNameADay`): false in an empty slot. */
  readonly mayNameADay: boolean;
}

/**
 * The counts of slots a statement is written for. The largest plan is 32 terms, 8 compounds and 32 pairs
 * (`maximumTerms`, `maximumCompounds`); a count above the last size is used as it is.
 */
const slotCounts = [1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 72];

/** The slots of `plan` (with its compounds among its terms: `withCompounds`), padded. */
export function termSlots(plan: QueryPlan): TermSlot[] {
  const slots: TermSlot[] = [
    ...plan.terms.map((term) => slotOf(term.word, term.written ?? null, false)),
    ...plan.pairs.map((pair) => slotOf(`${pair[0].word} ${pair[1].word}`, writtenPair(pair), true)),
  ];
  const count = slotCounts.find((size) => size >= slots.length) ?? slots.length;
  while (slots.length < count) {
    slots.push({ folded: null, written: null, phrase: false, mayNameADay: false });
  }
  return slots;
}

function slotOf(folded: string, written: string | null, phrase: boolean): TermSlot {
  return { folded, written, phrase, mayNameADay: mayNameADay(folded) };
}

/** A slot's `tsquery`: which function builds it is a bound flag, so a term and a pair share a text. */
export function slotQuery(slot: TermSlot): SqlStatement {
  return sql`CASE WHEN ${slot.phrase}::boolean THEN ${writtenOr("phraseto_tsquery", slot.folded, slot.written)}
    ELSE ${writtenOr("plainto_tsquery", slot.folded, slot.written)} END`;
}

/**
 * Every slot's query ORed (`q_0 || q_1 || …`, columns of `built`), without the empty slots: `||` of a NULL is
 * NULL, and the empty slots are the last ones, so each slot is ORed with the ones after it only when those hold
 * a query (`coalesce(q_0 || (…), q_0)`: each column named twice, the text grows with the count, not its square).
 */
export function anyOfSlots(count: number): SqlStatement {
  let anyOf = `built.q_${count - 1}`;
  for (let index = count - 2; index >= 0; index--) {
    anyOf = `coalesce(built.q_${index} || ${anyOf}, built.q_${index})`;
  }
  return raw(anyOf);
}

/** The first three letters of each month's name, as a day field spells it (`dayWords` of `@contextblocks/text`). */
const monthStarts = monthNames.map((name) => name.slice(0, 3).toLowerCase());

/**
 * Whether a term could match a day field ("8 May 2023": a number, a month's name, stemmed as `english` stems
 * it, which keeps a word's first letters): when it holds a digit or the start of a month's name anywhere.
 */
function mayNameADay(text: string): boolean {
  const lower = text.toLowerCase();
  return /\p{Nd}/u.test(lower) || monthStarts.some((start) => lower.includes(start));
}
