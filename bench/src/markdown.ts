/**
 * A GitHub-flavoured markdown table. Cells are written as given; `|` in a cell is escaped. The first
 * `textColumns` columns are left-aligned, the rest (figures) right-aligned.
 */
export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  textColumns = 1,
): string {
  const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
  const alignment = headers.map((_, index) => (index < textColumns ? "---" : "---:"));
  return [headers, alignment, ...rows].map((row) => `| ${row.map(escapeCell).join(" | ")} |`).join("\n");
}

/** A whole number with thousands separators: `12,345`. */
export function formatInteger(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** A share as a percentage with one decimal: `93.4%`. */
export function formatPercent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** A duration in the unit that keeps three significant figures readable: `840 ns`, `12.3 µs`, `4.56 ms`. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 0.001) return `${(milliseconds * 1e6).toFixed(0)} ns`;
  if (milliseconds < 1) return `${(milliseconds * 1e3).toPrecision(3)} µs`;
  if (milliseconds < 1000) return `${milliseconds.toPrecision(3)} ms`;
  return `${(milliseconds / 1000).toPrecision(3)} s`;
}

/** `other ÷ ours` as `2.35×`; `n/a` when either side is missing or ours is zero. */
export function formatRatio(other: number | undefined, ours: number | undefined): string {
  if (other === undefined || ours === undefined || !Number.isFinite(other) || !Number.isFinite(ours))
    return "n/a";
  if (ours === 0) return other === 0 ? "1.00×" : "∞";
  const ratio = other / ours;
  return `${ratio >= 100 ? ratio.toFixed(0) : ratio.toFixed(2)}×`;
}
