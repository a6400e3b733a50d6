/** A Markdown file split into its front-matter fields and its body. */
export interface FrontMatter {
  /** Top-level scalar fields (`name: value`), unquoted; nested mappings and lists are skipped. */
  fields: Record<string, string>;
  /** The text after the closing `---` (the whole text when there is no front-matter). */
  body: string;
}

/**
 * Reads the YAML front-matter of a SKILL.md file: the subset skills use (top-level `key: value` lines,
 * single- or double-quoted values, `>` and `|` block values, plain values continued on indented lines,
 * comments). One pass over the lines, no backtracking: linear in the size of the file. Anything else in
 * the front-matter (nested mappings, lists) is skipped, not misread.
 */
export function parseFrontMatter(text: string): FrontMatter {
  const source = text.startsWith("\ufeff") ? text.slice(1) : text;
  const lines = source.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  if (lines[0]?.trimEnd() !== "---") return { fields: {}, body: source };
  let end = -1;
  for (let index = 1; index < lines.length; index++) {
    const line = (lines[index] ?? "").trimEnd();
    if (line === "---" || line === "...") {
      end = index;
      break;
    }
  }
  if (end === -1) return { fields: {}, body: source };

  const fields: Record<string, string> = Object.create(null);
  let index = 1;
  while (index < end) {
    const line = lines[index] ?? "";
    index += 1;
    if (isBlankOrComment(line) || isIndented(line)) continue;
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const rest = line.slice(colon + 1).trim();
    // The indented lines that belong to this field.
    const continued: string[] = [];
    while (index < end && (isIndented(lines[index] ?? "") || (lines[index] ?? "").trim() === "")) {
      continued.push((lines[index] ?? "").trim());
      index += 1;
    }
    const value = fieldValue(rest, continued);
    if (value !== null) fields[name] = value;
  }
  return { fields: { ...fields }, body: lines.slice(end + 1).join("\n") };
}

/** The value of one field from the text after its colon and its indented continuation lines. */
function fieldValue(rest: string, continued: string[]): string | null {
  const indicator = rest.charAt(0);
  if ((indicator === ">" || indicator === "|") && /^[>|][+-]?(?:\s+#.*)?$/.test(rest)) {
    const kept = trimBlankEdges(continued);
    return indicator === ">" ? kept.join(" ").trim() : kept.join("\n");
  }
  if (indicator === '"') return doubleQuoted(rest, continued);
  if (indicator === "'") return singleQuoted(rest, continued);
  if (rest === "" || indicator === "[" || indicator === "{" || indicator === "&" || indicator === "*") {
    return null; // a nested mapping, a list or an alias: not a scalar field
  }
  const plain = [withoutComment(rest), ...continued.filter((line) => line !== "")];
  return plain.join(" ").trim();
}

function doubleQuoted(rest: string, continued: string[]): string {
  const whole = [rest, ...continued].join(" ").trim();
  const close = whole.lastIndexOf('"');
  const inner = close > 0 ? whole.slice(0, close + 1) : `${whole}"`;
  try {
    const parsed: unknown = JSON.parse(inner);
    if (typeof parsed === "string") return parsed;
  } catch {
    // YAML escapes JSON does not know (\x, \_): keep the text between the quotes as it is.
  }
  return inner.slice(1, -1);
}

function singleQuoted(rest: string, continued: string[]): string {
  const whole = [rest, ...continued].join(" ").trim();
  const close = whole.lastIndexOf("'");
  return (close > 0 ? whole.slice(1, close) : whole.slice(1)).split("''").join("'");
}

function withoutComment(value: string): string {
  const comment = value.indexOf(" #");
  return comment === -1 ? value : value.slice(0, comment).trimEnd();
}

function trimBlankEdges(lines: string[]): string[] {
  let start = 0;
  let stop = lines.length;
  while (start < stop && lines[start] === "") start += 1;
  while (stop > start && lines[stop - 1] === "") stop -= 1;
  return lines.slice(start, stop);
}

function isBlankOrComment(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === "" || trimmed.startsWith("#");
}

function isIndented(line: string): boolean {
  return line.startsWith(" ") || line.startsWith("\t");
}
