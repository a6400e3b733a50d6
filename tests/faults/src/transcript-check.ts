import type { SessionMessage } from "@contextblocks/sessions";
import type { SessionStore } from "@contextblocks/sessions/store-kit";
import { nextPromptProblem, unansweredToolCalls } from "./next-prompt.js";
import type { WriterScript } from "./writer-script.js";

/** What one check of a stored session found: every list empty and no problem means every invariant held. */
export interface TranscriptFindings {
  /** Acknowledged messages missing from the active path (not stored, or stored off it). */
  lost: string[];
  /** Acknowledged messages stored more than once. */
  duplicated: string[];
  /** Messages with more than one child (the writers here never branch). */
  forks: string[];
  /** Messages on the path that do not read back as their writer sent them, or why the path is unreadable. */
  halfWritten: string[];
  /** Batches (one `appendMessages` call each) the path holds only in part, each named by an id in it. */
  partialBatches: string[];
  /** Why the next turn's prompt would be refused, or `null`. */
  invalidNextPrompt: string | null;
  /** The tool calls that make it refused: no result follows them. */
  unansweredToolCalls: string[];
  /** Messages on the active path. */
  pathLength: number;
}

/** Findings of a check that found nothing yet. */
export function noFindings(): TranscriptFindings {
  return {
    lost: [],
    duplicated: [],
    forks: [],
    halfWritten: [],
    partialBatches: [],
    invalidNextPrompt: null,
    unansweredToolCalls: [],
    pathLength: 0,
  };
}

/**
 * Checks one session as a new reader finds it: every acknowledged message stored exactly once and on the
 * active path, no message with two children, every message on the path whole, no batch stored in part,
 * and the path replayable as the next turn's prompt.
 */
export async function checkTranscript(
  store: SessionStore,
  acknowledged: Iterable<string>,
  script: WriterScript,
): Promise<TranscriptFindings> {
  const findings = noFindings();
  const nodes = await store.getTree();
  const copies = new Map<string, number>();
  const children = new Map<string, number>();
  for (const node of nodes) {
    copies.set(node.id, (copies.get(node.id) ?? 0) + 1);
    if (node.parentId !== null) children.set(node.parentId, (children.get(node.parentId) ?? 0) + 1);
  }
  let path: SessionMessage[];
  try {
    path = await store.getHistory();
  } catch (error) {
    findings.halfWritten.push(`the path is unreadable: ${(error as Error).message}`);
    path = [];
  }
  findings.pathLength = path.length;
  const onPath = new Set(path.map((message) => message.id));
  for (const id of acknowledged) {
    const count = copies.get(id) ?? 0;
    if (count === 0 || !onPath.has(id)) findings.lost.push(id);
    if (count > 1) findings.duplicated.push(id);
  }
  for (const [id, count] of children) if (count > 1) findings.forks.push(id);
  for (const message of path) if (!script.isWhole(message)) findings.halfWritten.push(message.id);
  findings.partialBatches = script.partialBatches(path);
  findings.invalidNextPrompt = await nextPromptProblem(path);
  findings.unansweredToolCalls = await unansweredToolCalls(path);
  return findings;
}
