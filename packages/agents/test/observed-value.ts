/**
 * What a step observed, comparable across the two: times, token figures and random ids (overlays', the
 * manager's sessions') replaced by placeholders, random ids numbered in the order they first appear.
 */
export function observe(value: unknown, ids: Map<string, string>): unknown {
  if (value === undefined) return "<undefined>";
  return JSON.parse(
    JSON.stringify(value, (key, item) => {
      // Times differ by when they ran (and the manager's carry milliseconds here: README).
      if (key === "createdAt" || key === "created_at" || key === "updated_at") return "<time>";
      if (key === "tokens") return "<tokens>";
      if (typeof item === "string") {
        return item.replace(/[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|cmp_[A-Za-z0-9_-]+/g, (id) => {
          if (!ids.has(id)) ids.set(id, `<random id ${ids.size}>`);
          return ids.get(id) as string;
        });
      }
      if (item !== null && typeof item === "object" && typeof item.id === "string") {
        // An overlay's `metadata.compaction` is ours only (README).
        if (item.id.startsWith("compaction_") && item.metadata?.compaction !== undefined) {
          const { metadata: _metadata, ...rest } = item;
          return rest;
        }
      }
      return item;
    }),
  );
}

/**
 * A rendered prompt's block headers with their token figures replaced: the two estimates differ (the compaction
 * helpers' row).
 */
export function withoutTokenFigures(rendered: string): string {
  return rendered.replace(/\[\d+% — \d+\/\d+ tokens\]/g, "[<tokens>]");
}
