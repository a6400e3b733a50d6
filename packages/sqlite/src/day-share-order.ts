/** A search candidate as the statement of a Durable Object's search returns it, scored but not yet ordered. */
export interface ScoredCandidate {
  session_id: string;
  /** The day its row carries, in words; the candidates of a day share its best score (`dayShare`). */
  time: string | null;
  /** Its search rowid: equal places keep rowid order within a day. */
  row: number;
  /** bm25 with the shares lent and its factors: lower ranks first. */
  score: number;
}

/**
 * The best `limit` candidates, best first, each placed at its score plus `dayShare` of the best score of its
 * day in its session: the order SQLite gives `ORDER BY score + dayShare * min(score) OVER (PARTITION BY
 * session_id, time)` (equal places by session, day, then rowid; without the day's share, by rowid), so the
 * candidates are the same. Sorted here instead: on a Durable Object the window and the sort are passes over
 * the candidates, about four rows read each, which would keep a deeper pool over the rows a search may read.
 */
export function bestByDay<Candidate extends ScoredCandidate>(
  candidates: readonly Candidate[],
  dayShare: number,
  limit: number,
): Candidate[] {
  const placed = candidates.map((candidate) => ({ candidate, place: candidate.score }));
  if (dayShare > 0) {
    const best = new Map<string, number>();
    const dayOf = (candidate: Candidate) => JSON.stringify([candidate.session_id, candidate.time]);
    for (const { candidate } of placed) {
      const day = dayOf(candidate);
      const score = best.get(day);
      if (score === undefined || candidate.score < score) best.set(day, candidate.score);
    }
    for (const each of placed) {
      each.place = each.candidate.score + dayShare * (best.get(dayOf(each.candidate)) as number);
    }
  }
  placed.sort(
    (left, right) =>
      left.place - right.place ||
      (dayShare > 0
        ? compareText(left.candidate.session_id, right.candidate.session_id) ||
          compareText(left.candidate.time, right.candidate.time)
        : 0) ||
      left.candidate.row - right.candidate.row,
  );
  return placed.slice(0, limit).map((each) => each.candidate);
}

/** SQLite's `BINARY` order of two texts (their UTF-8 bytes, so by code point), NULL first. */
function compareText(left: string | null, right: string | null): number {
  if (left === right) return 0;
  if (left === null) return -1;
  if (right === null) return 1;
  const leftPoints = [...left];
  const rightPoints = [...right];
  const length = Math.min(leftPoints.length, rightPoints.length);
  for (let index = 0; index < length; index++) {
    const difference = (leftPoints[index]?.codePointAt(0) ?? 0) - (rightPoints[index]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return leftPoints.length - rightPoints.length;
}
