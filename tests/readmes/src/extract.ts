/**
 * Finds the fenced TypeScript blocks of a README and what each is marked to do. A marker is an HTML
 * comment on the last non-blank line(s) before the fence (invisible on GitHub and npm):
 *
 *   <!-- readme-check: run -->            compile under strict nodenext, then run it in Node
 *   <!-- readme-check: compile -->        compile only (the default when there is no marker)
 *   <!-- readme-check: compile-worker --> compile only, against @cloudflare/workers-types
 *   <!-- readme-check: skip: reason -->   neither; the reason is required
 *
 * Lines after the first inside the comment are a preamble prepended to the block: the declarations the
 * block assumes (`declare const model: LanguageModel;`). A preamble line `this: Type` compiles the block's
 * statements as the body of a method whose `this` is `Type`, for blocks written inside a Durable Object.
 */
export type SnippetMode = "run" | "compile" | "compile-worker" | "skip";

export interface Snippet {
  /** The README's path relative to the repository root. */
  readme: string;
  /** 1-based line of the opening fence. */
  line: number;
  mode: SnippetMode;
  /** Why it is skipped (mode "skip"). */
  reason: string;
  /** The block's own lines. */
  code: string;
  /** Lines from the marker comment, without the `this:` directive. */
  preamble: string;
  /** The `this` type of the wrapping method, from a `this: Type` preamble line. */
  thisType: string | null;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*(ts|typescript|tsx|mts)[ \t]*$/;
const MARKER_START = "<!-- readme-check:";

export function extractSnippets(readme: string, text: string): Snippet[] {
  const lines = text.split("\n");
  const snippets: Snippet[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    const opening = FENCE_OPEN.exec(line);
    if (opening === null) {
      // Skip over other fenced blocks whole, so a fence inside them is not mistaken for a TypeScript one.
      const other = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (other) index = closingFence(lines, index, other[1] as string);
      continue;
    }
    const fence = opening[1] as string;
    const end = closingFence(lines, index, fence);
    const code = lines.slice(index + 1, end).join("\n");
    const marker = markerBefore(lines, index);
    snippets.push({ readme, line: index + 1, code, ...parseMarker(marker, readme, index + 1) });
    index = end;
  }
  return snippets;
}

function closingFence(lines: readonly string[], opening: number, fence: string): number {
  for (let index = opening + 1; index < lines.length; index++) {
    const line = (lines[index] ?? "").trim();
    if (line.startsWith(fence) && line.slice(fence.length).trim() === "" && line[0] === fence[0])
      return index;
  }
  return lines.length;
}

/** The marker comment's text when the last non-blank lines before `fence` are one; otherwise `null`. */
function markerBefore(lines: readonly string[], fence: number): string | null {
  let end = fence - 1;
  while (end >= 0 && (lines[end] ?? "").trim() === "") end--;
  if (end < 0 || !(lines[end] ?? "").trimEnd().endsWith("-->")) return null;
  for (let start = end; start >= 0 && fence - start < 60; start--) {
    const line = lines[start] ?? "";
    if (line.trimStart().startsWith(MARKER_START)) return lines.slice(start, end + 1).join("\n");
    if (start < end && line.includes("-->")) return null;
  }
  return null;
}

function parseMarker(
  marker: string | null,
  readme: string,
  line: number,
): Pick<Snippet, "mode" | "reason" | "preamble" | "thisType"> {
  if (marker === null) return { mode: "compile", reason: "", preamble: "", thisType: null };
  const body = marker.trim().slice(MARKER_START.length, -"-->".length);
  const [first = "", ...rest] = body.split("\n");
  const directive = first.trim();
  let mode: SnippetMode;
  let reason = "";
  if (directive === "run" || directive === "compile" || directive === "compile-worker") mode = directive;
  else if (directive.startsWith("skip:") && directive.slice(5).trim() !== "") {
    mode = "skip";
    reason = directive.slice(5).trim();
  } else {
    throw new Error(
      `${readme}:${line}: unknown readme-check marker "${directive}" (run, compile, compile-worker or skip: reason)`,
    );
  }
  let thisType: string | null = null;
  const preamble: string[] = [];
  for (const preambleLine of rest) {
    const directiveThis = /^\s*this:\s*(\S.*)$/.exec(preambleLine);
    if (directiveThis) thisType = (directiveThis[1] as string).trim();
    else preamble.push(preambleLine);
  }
  return { mode, reason, preamble: preamble.join("\n").trim(), thisType };
}

/** The module a snippet compiles as: its imports first, then the preamble, then the rest of its code. */
export function snippetModule(snippet: Snippet): string {
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of snippet.code.split("\n")) {
    if (inImport || /^import\s/.test(line)) {
      imports.push(line);
      inImport = !/;\s*(\/\/.*)?$/.test(line) && !/from\s+["'][^"']+["']\s*$/.test(line);
    } else body.push(line);
  }
  const preambleImports = snippet.preamble.split("\n").filter((line) => /^import\s/.test(line));
  const preambleRest = snippet.preamble.split("\n").filter((line) => !/^import\s/.test(line));
  const statements =
    snippet.thisType === null
      ? body
      : [`export async function readmeSnippet(this: ${snippet.thisType}) {`, ...body, "}"];
  return [...imports, ...preambleImports, ...preambleRest, ...statements, "export {};", ""].join("\n");
}
