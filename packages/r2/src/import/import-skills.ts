import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { ContextError } from "@contextblocks/core";
import type { SkillPutTarget } from "../bucket.js";
import {
  checkPrefix,
  hasLoneSurrogate,
  keyProblem,
  MAX_DESCRIPTION_BYTES,
  oneLine,
  utf8Length,
} from "../object-key.js";
import { skillPutOptions } from "../skill-object.js";
import { parseFrontMatter } from "./front-matter.js";

/** The file every skill folder holds. */
export const SKILL_FILE = "SKILL.md";

export interface ImportSkillsOptions {
  /** Put before every key, as `R2SkillProvider`'s `prefix` (use the same one). Default none. */
  prefix?: string | undefined;
}

/** One uploaded skill. */
export interface ImportedSkill {
  key: string;
  description: string | undefined;
  /** The SKILL.md file, relative to the imported directory. */
  file: string;
  /** UTF-8 bytes of the uploaded content. */
  bytes: number;
}

/**
 * Uploads every `SKILL.md` under `directory` (at any depth) as one skill object: the key is the
 * front-matter `name` (or, without one, the name of the folder holding the file), the description the
 * front-matter `description` on one line, the content the Markdown after the front-matter. Every file is
 * checked before anything is uploaded: a bad name, a duplicate name, a description over 4,096 bytes or
 * a lone surrogate stops the import with one `INVALID_INPUT` error listing every problem.
 *
 * `target` is anything with R2's `put`: an R2 binding, a bucket from wrangler's `getPlatformProxy`.
 */
export async function importSkillsDirectory(
  given: string,
  target: SkillPutTarget,
  options: ImportSkillsOptions = {},
): Promise<ImportedSkill[]> {
  const prefix = checkPrefix(options.prefix);
  // One spelling of the directory ("dir/", "./dir", "dir" alike), so a SKILL.md at its root is recognised.
  const directory = resolve(given);
  const files = (await findSkillFiles(directory)).sort();
  const problems: string[] = [];
  const skills: (ImportedSkill & { content: string })[] = [];
  const fileOfKey = new Map<string, string>();
  for (const path of files) {
    const file = relative(directory, path);
    const { fields, body } = parseFrontMatter(await readFile(path, "utf8"));
    const folder = basename(dirname(path));
    const key = fields.name?.trim() || (dirname(path) === directory ? "" : folder);
    const description = oneLine(fields.description ?? "") || undefined;
    const content = withoutLeadingBlankLines(body);
    const keyIssue = keyProblem(key, prefix);
    if (keyIssue !== null) problems.push(`${file}: ${key === "" ? "no front-matter name" : keyIssue}`);
    const earlier = fileOfKey.get(key);
    if (earlier !== undefined) problems.push(`${file}: the name "${key}" is also used by ${earlier}`);
    fileOfKey.set(key, file);
    if (description !== undefined && utf8Length(description) > MAX_DESCRIPTION_BYTES)
      problems.push(`${file}: the description is over ${MAX_DESCRIPTION_BYTES} bytes`);
    if (hasLoneSurrogate(content)) problems.push(`${file}: the content has a lone UTF-16 surrogate`);
    skills.push({ key, description, file, bytes: utf8Length(content), content });
  }
  if (problems.length > 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `importSkillsDirectory: nothing was uploaded; fix these first:\n${problems.map((problem) => `- ${problem}`).join("\n")}`,
    );
  }
  for (const skill of skills)
    await target.put(prefix + skill.key, skill.content, skillPutOptions(skill.description));
  return skills.map(({ content: _content, ...imported }) => imported);
}

/** The body without the blank lines between the front-matter and the first line of text. */
function withoutLeadingBlankLines(body: string): string {
  let start = 0;
  for (;;) {
    const end = body.indexOf("\n", start);
    if (end === -1 || body.slice(start, end).trim() !== "") return body.slice(start);
    start = end + 1;
  }
}

/** Every SKILL.md under `directory`, skipping hidden folders and node_modules. */
async function findSkillFiles(directory: string): Promise<string[]> {
  const found: string[] = [];
  const pending = [directory];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && entry.name !== "node_modules")
          pending.push(join(current, entry.name));
      } else if (entry.isFile() && entry.name === SKILL_FILE) {
        found.push(join(current, entry.name));
      }
    }
  }
  return found;
}
