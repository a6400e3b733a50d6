import type { LayoutStrategy } from "./layout-strategy.js";
import type { PlaceRow } from "./path-row.js";

/**
 * The depth and summed token stamps of the path root..`place`, walked (once, for an append under a row
 * whose totals are not kept: another writer's, or cleared by a delete above it). `tokens` is `null` when a
 * row of the path has no stamp: the store sums the stamps it was given and estimates none.
 */
export async function walkedTotals(
  layout: Pick<LayoutStrategy, "walk">,
  place: PlaceRow,
): Promise<{ depth: number; tokens: number | null }> {
  const rows = await layout.walk(place, Number.MAX_SAFE_INTEGER, false);
  let tokens: number | null = 0;
  for (const row of rows) {
    tokens =
      tokens === null || row.tokens === null || row.tokens === undefined ? null : tokens + Number(row.tokens);
  }
  return { depth: Math.max(0, rows.length - 1), tokens };
}
