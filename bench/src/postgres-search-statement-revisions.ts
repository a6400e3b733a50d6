/**
 * The Postgres session search statement (packages/postgres/src/message-search-statement.ts) as a git revision
 * has it and as the working tree has it, for the benches that compare the two in one process.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SearchRanking } from "@contextblocks/sessions/store-kit";
import type { SqlStatement } from "@contextblocks/sql";
import type { QueryPlan } from "@contextblocks/text";

export type MessageSearchStatement = (
  sessionId: string | undefined,
  plan: QueryPlan,
  limit: number,
  ranking?: SearchRanking,
) => SqlStatement;

const statementPath = "packages/postgres/src/message-search-statement.ts";
const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The statement as the revision has it, written under the bench's output with the files of its package it
 * imports (as that revision has them, in a directory of its own), so its imports resolve.
 */
export async function statementAt(revision: string): Promise<MessageSearchStatement> {
  const directory = fileURLToPath(
    new URL(`../out/statement-${revision.replace(/[^A-Za-z0-9]/g, "_")}/`, import.meta.url),
  );
  mkdirSync(directory, { recursive: true });
  const source = dirname(statementPath);
  const pending = [basename(statementPath)];
  const written = new Set<string>();
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (written.has(name)) continue;
    written.add(name);
    const text = execFileSync("git", ["show", `${revision}:${source}/${name}`], {
      cwd: root,
      encoding: "utf8",
    });
    writeFileSync(`${directory}${name}`, text);
    for (const [, sibling] of text.matchAll(/from "\.\/([\w-]+)\.js"/g)) pending.push(`${sibling}.ts`);
  }
  const file = `${directory}${basename(statementPath)}`;
  return ((await import(pathToFileURL(file).href)) as { messageSearchStatement: MessageSearchStatement })
    .messageSearchStatement;
}

/** The statement as the working tree has it. */
export async function workingStatement(): Promise<MessageSearchStatement> {
  const file = pathToFileURL(`${root}${statementPath}`).href;
  return ((await import(file)) as { messageSearchStatement: MessageSearchStatement }).messageSearchStatement;
}

/** A search result as both benches compare it. */
export interface SearchRow {
  id: string;
  relevance: number | string;
  own_hit: number | string;
}

/** Whether two searches returned the same ids in the same order, the same `own_hit`, relevance within 1e-9. */
export function sameRows(left: readonly SearchRow[], right: readonly SearchRow[]): boolean {
  return (
    left.length === right.length &&
    left.every((row, position) => {
      const other = right[position];
      return (
        other !== undefined &&
        row.id === other.id &&
        Number(row.own_hit) === Number(other.own_hit) &&
        Math.abs(Number(row.relevance) - Number(other.relevance)) <= 1e-9
      );
    })
  );
}
