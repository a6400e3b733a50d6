/**
 * The LoCoMo dev split (read its README in the shared bench-data directory): conversations as turns, and the
 * questions whose evidence names turns. Never copied into the repository: read from `LOCOMO_DIRECTORY`, else
 * `<repo>/../shared/bench-data/locomo-dev`, else `/work/shared/bench-data/locomo-dev` (from a git worktree).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

export interface LocomoQuestion {
  question: string;
  evidence: string[];
  category: number;
}

export interface LocomoConversation {
  name: string;
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
}

/** `LOCOMO_DIRECTORY`, else next to the repository, else (from a git worktree) the shared absolute path. */
export const locomoDirectory: URL = (() => {
  if (process.env.LOCOMO_DIRECTORY !== undefined)
    return new URL(`file://${process.env.LOCOMO_DIRECTORY.replace(/\/?$/, "/")}`);
  const beside = new URL("../../../shared/bench-data/locomo-dev/", import.meta.url);
  return existsSync(beside) ? beside : new URL("file:///work/shared/bench-data/locomo-dev/");
})();

/** The conversations, or `null` when the data is not on this machine. `smoke`: one conversation, 30 questions. */
export function readLocomo(smoke = false): LocomoConversation[] | null {
  if (!existsSync(locomoDirectory)) return null;
  const files = readdirSync(locomoDirectory)
    .filter((file) => file.endsWith(".json"))
    .sort();
  return (smoke ? files.slice(0, 1) : files).map((file) => {
    const data = JSON.parse(readFileSync(new URL(file, locomoDirectory), "utf8")) as Record<string, unknown>;
    const turns: LocomoTurn[] = [];
    for (let session = 1; Array.isArray(data[`session_${session}`]); session++) {
      turns.push(...(data[`session_${session}`] as LocomoTurn[]));
    }
    const questions = (data.qa as LocomoQuestion[]).filter(
      (question) => Array.isArray(question.evidence) && question.evidence.length > 0,
    );
    return {
      name: file.replace(/\.json$/, ""),
      turns,
      questions: smoke ? questions.slice(0, 30) : questions,
    };
  });
}

/** The keys of a search result (`[key]` lines), in order, each once. */
export function resultKeys(result: string | null, keys: ReadonlySet<string>): string[] {
  if (result === null) return [];
  const found: string[] = [];
  for (const line of result.split("\n")) {
    const match = /^\[([^\]\n]*)\]/.exec(line);
    if (match?.[1] !== undefined && keys.has(match[1]) && !found.includes(match[1])) found.push(match[1]);
  }
  return found;
}
