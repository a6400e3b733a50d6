/**
 * The Postgres session search statement (packages/postgres/src/message-search-statement.ts) as a git revision
 * has it and as the working tree has it, for the benches that compare the two in one process.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
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

/** The statement as the revision has it, written beside the bench's output so its imports resolve. */
export async function statementAt(revision: string): Promise<MessageSearchStatement> {
  const text = execFileSync("git", ["show", `${revision}:${statementPath}`], { cwd: root, encoding: "utf8" });
  const directory = fileURLToPath(new URL("../out/", import.meta.url));
  mkdirSync(directory, { recursive: true });
  const file = `${directory}message-search-statement-${revision.replace(/[^A-Za-z0-9]/g, "_")}.ts`;
  writeFileSync(file, text);
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
