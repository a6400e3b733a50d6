/**
 * Words that carry no topic in an English question ("what does the user eat for breakfast?"): articles,
 * pronouns, auxiliaries, prepositions, question words, and the fragments `unicode61` leaves of
 * contractions ("don't" becomes "don" and "t"). They are left out of the search unless the query has
 * nothing else, so a query of only such words ("NOT", "the who") still finds entries containing them.
 *
 * Kept small on purpose: words common in one knowledge base but not in English at large are handled by
 * document frequency at query time, not by this list.
 */
const words = `
a about above after again against all am an and any are aren as at
be because been before being below between both but by
can cannot could couldn
d did didn do does doesn doing don down during
each either
few for from further
get gets got had hadn has hasn have haven having he her here hers herself him himself his how
i if in into is isn it its itself
just
ll
m me might mightn more most much must mustn my myself
neither no nor not now
o of off on once only or other ought our ours ourselves out over own
re
s same shall shan she should shouldn so some such
t than that the their theirs them themselves then there these they this those through to too
under until up upon us
ve very
was wasn we were weren what whatever when where whether which while who whom whose why will with won would wouldn
you your yours yourself yourselves
`;

/** The English stopwords, folded (lower case, no diacritics). */
export const stopwords: ReadonlySet<string> = new Set(words.split(/\s+/).filter((word) => word.length > 0));

/** True for a stopword or a single ASCII letter (what `unicode61` leaves of "user's" or "I'm"). */
export function isStopword(folded: string): boolean {
  return stopwords.has(folded) || /^[a-z]$/.test(folded);
}
