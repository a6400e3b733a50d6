import { defaultSearchRanking, type SearchRanking } from "@contextblocks/sessions/store-kit";

/**
 * The ranking a Postgres session search uses unless given one: `defaultSearchRanking` with a deeper candidate
 * pool (`extraCandidates` 160: 190 matches ranked further for a 10-hit search). Postgres scores a term by its
 * presence, not its count, so more matches tie near the top than under FTS5's bm25, and a shallow pool cuts
 * among them: bench's `session-search-selection` chose 160 over 40 on every conversation left out (40 lost
 * 0.015 of hit@10 without message times), and ranking every match gained nothing more for about 1.7 times
 * the time.
 */
export const defaultPostgresSearchRanking: Readonly<SearchRanking> = Object.freeze({
  ...defaultSearchRanking,
  extraCandidates: 160,
});
