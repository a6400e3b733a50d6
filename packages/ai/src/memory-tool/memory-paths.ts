import { ContextError } from "@contextblocks/core";

/** The directory Anthropic's memory tool works in; every path the model sends starts with it. */
export const MEMORY_ROOT = "/memories";

/** The longest path accepted, in characters. */
const MAX_PATH_LENGTH = 512;

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * The characters a file or directory name the model makes up may hold: letters and digits of any script
 * (with their combining marks), `.`, `_`, `-` and spaces. Everything else (`:`, `%`, slashes of other
 * scripts, `＼`, `．`) is refused, so a name cannot smuggle a separator or an encoded `..` past the checks,
 * and a skill listing line (`- key: description`) always reads back to its key.
 */
const NAME = /^[\p{L}\p{N}\p{M}._ -]+$/u;

/**
 * A path under `/memories`, checked: `root` for the directory itself, else `relative` (the part after
 * `/memories/`, without a trailing `/`) and whether the model wrote it as a directory (`/notes/`).
 */
export type MemoryPath =
  | { kind: "root"; path: string }
  | { kind: "relative"; path: string; relative: string; segments: string[]; directory: boolean };

/**
 * Reads a path the model sent. Refuses, with an error that says what to send instead: a non-string, a path
 * outside `/memories`, backslashes, percent signs (encoded forms are never decoded), control characters,
 * doubled slashes, and `.` / `..` segments or names starting with a dot. Nothing here touches storage.
 */
export function parseMemoryPath(value: unknown, field = "path"): MemoryPath {
  if (typeof value !== "string" || value.length === 0) {
    throw refused(`${field} must be a non-empty string such as "${MEMORY_ROOT}/notes.md"`);
  }
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value.length > MAX_PATH_LENGTH) {
    throw refused(`${field} ${shown} is ${value.length} characters; the limit is ${MAX_PATH_LENGTH}`);
  }
  if (value.includes("\\")) throw refused(`${field} ${shown} has a backslash; separate names with "/"`);
  if (value.includes("%")) {
    throw refused(`${field} ${shown} has a "%"; write names plainly (encoded characters are not decoded)`);
  }
  const control = CONTROL_CHARACTER.exec(value);
  if (control !== null) {
    throw refused(`${field} ${shown} has a control character or line break at index ${control.index}`);
  }
  if (value === MEMORY_ROOT || value === `${MEMORY_ROOT}/`) return { kind: "root", path: MEMORY_ROOT };
  if (!value.startsWith(`${MEMORY_ROOT}/`)) {
    throw refused(
      `${field} ${shown} is outside ${MEMORY_ROOT}; every path must start with "${MEMORY_ROOT}/"`,
    );
  }
  const directory = value.endsWith("/");
  const relative = value.slice(MEMORY_ROOT.length + 1, directory ? -1 : undefined);
  const segments = relative.split("/");
  for (const segment of segments) {
    if (segment === "") throw refused(`${field} ${shown} has an empty name (a doubled or trailing "/")`);
    if (segment === "." || segment === "..") {
      throw refused(`${field} ${shown} has a "${segment}" segment; write the full path from ${MEMORY_ROOT}`);
    }
  }
  return { kind: "relative", path: `${MEMORY_ROOT}/${relative}`, relative, segments, directory };
}

/**
 * Checks the names of a file the model creates (not a block's own file, whose name is its label): each
 * name made of letters, digits, `.`, `_`, `-` and inner spaces, not starting with a dot.
 */
export function checkFileNames(path: Extract<MemoryPath, { kind: "relative" }>): void {
  for (const segment of path.segments) {
    if (!NAME.test(segment) || segment.startsWith(".") || segment.trim() !== segment) {
      throw refused(
        `the name ${JSON.stringify(segment)} in ${path.path} is not allowed: use letters, digits, ".", "_", "-" and inner spaces, not starting with a dot`,
      );
    }
  }
}

function refused(message: string): ContextError {
  return new ContextError("INVALID_INPUT", `Invalid path: ${message}. Nothing was changed.`);
}
