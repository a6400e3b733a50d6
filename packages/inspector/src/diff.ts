/** One line of a line diff: kept, removed (only in the older text) or added (only in the newer). */
export interface DiffLine {
  kind: "same" | "removed" | "added";
  text: string;
}

/** Longest texts (in lines, each side) diffed line by line; longer ones are shown as a whole replacement. */
const MAX_DIFF_LINES = 2_000;

/** A line diff of `before` → `after` (longest common subsequence). */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) {
    return [
      ...a.map((text) => ({ kind: "removed" as const, text })),
      ...b.map((text) => ({ kind: "added" as const, text })),
    ];
  }
  // lengths[i][j]: LCS length of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = lengths[i] as Uint32Array;
    const next = lengths[i + 1] as Uint32Array;
    for (let j = b.length - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", text: a[i] as string });
      i++;
      j++;
    } else if (
      ((lengths[i + 1] as Uint32Array)[j] as number) >= ((lengths[i] as Uint32Array)[j + 1] as number)
    ) {
      out.push({ kind: "removed", text: a[i++] as string });
    } else {
      out.push({ kind: "added", text: b[j++] as string });
    }
  }
  while (i < a.length) out.push({ kind: "removed", text: a[i++] as string });
  while (j < b.length) out.push({ kind: "added", text: b[j++] as string });
  return out;
}
