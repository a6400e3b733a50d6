import {
  type BlockKind,
  type ContextBlocks,
  isContextError,
  parseSections,
  renderSection,
  usagePercent,
  type WhenChanged,
} from "@contextblocks/core";
import { clipped, errorMessage, sha256Hex } from "@contextblocks/core/store-kit";
import type { SearchResult, Session, SessionManager } from "@contextblocks/sessions";
import { type BlockVersionView, canRestore, hasBlockHistory, readBlockHistory } from "./history.js";
import { type CompactionView, readTree, type TreeNodeView } from "./tree.js";

export type { CompactionView, TreeNodeView };

/** One block as the inspector shows it. */
export interface BlockView {
  label: string;
  description: string | null;
  kind: BlockKind;
  whenChanged: WhenChanged;
  content: string;
  tokens: number;
  maxTokens: number | null;
  usagePercent: number | null;
  writable: boolean;
  /** False when the block changed after the prompt was frozen. */
  matchesFrozenPrompt: boolean;
  /** Versions, newest first, when the context keeps block history; `null` when it does not. */
  history: BlockVersionView[] | null;
}

/**
 * A session: its message tree with the compaction overlays, or why it could not be read (`error`, clipped;
 * then the tree and the overlays are empty and the counts 0), so one broken session never hides the others.
 */
export interface SessionView {
  id: string;
  name: string;
  updatedAt: string | null;
  pathLength: number;
  storedMessages: number;
  tree: TreeNodeView[];
  compactions: CompactionView[];
  error: string | null;
}

export interface InspectorSnapshot {
  title: string;
  /**
   * The system prompt the next turn sends: the frozen one, or before any turn froze it the blocks rendered
   * as they read now (`previewSystemPrompt()`; the inspector never freezes it). `null` for no blocks.
   */
  prompt: string | null;
  promptSha256: string | null;
  promptTokens: number;
  reminder: string | null;
  blocks: BlockView[];
  sessions: SessionView[];
  /**
   * Why the manager's sessions could not be listed (its registry failed), or `null`: the page still shows the
   * blocks, the prompt and the search, with this error where the sessions would be.
   */
  sessionsError: string | null;
  /** The search the request asked for (`?q=`), with its hits or why there are none. */
  search: { query: string; results: SearchResult[]; error: string | null } | null;
  /** The context can restore a version (`restoreBlock`) and this request may write. */
  canRestore: boolean;
}

/** What the inspector shows: a context's blocks, and a session or a manager's sessions. */
export interface InspectorSource {
  context: ContextBlocks | undefined;
  sessions: SessionManager | Session | undefined;
}

/** Sessions of a manager shown, most recently updated first. */
const MAX_SESSIONS = 20;

export async function buildSnapshot(
  source: InspectorSource,
  options: { title: string; query: string | null; mayWrite: boolean; treeLimit: number },
): Promise<InspectorSnapshot> {
  const context = source.context;
  let prompt: string | null = null;
  let reminder: string | null = null;
  const blocks: BlockView[] = [];
  if (context !== undefined && context.getConfigs().length > 0) {
    // A read never writes: the frozen prompt when one is, else the blocks rendered as they read now. Freezing
    // here would let a page view decide the first turn's prompt (memory written after it left out).
    // Blocks read first, so a preview renders what they hold now (another instance may have written them).
    await context.load();
    prompt = await context.previewSystemPrompt();
    reminder = await context.reminder();
    const frozen = new Set(parseSections(prompt).map((section) => section.text));
    const withHistory = hasBlockHistory(context) ? context : null;
    for (const block of context.getBlocks()) {
      let history: BlockVersionView[] | null = null;
      if (withHistory !== null) {
        try {
          history = await readBlockHistory(withHistory, block.label);
        } catch {
          history = null;
        }
      }
      blocks.push({
        label: block.label,
        description: block.description ?? null,
        kind: block.kind,
        whenChanged: block.whenChanged,
        content: block.content,
        tokens: block.tokens,
        maxTokens: block.maxTokens ?? null,
        usagePercent: block.maxTokens === undefined ? null : usagePercent(block.tokens, block.maxTokens),
        writable: block.writable,
        matchesFrozenPrompt: frozen.has(renderSection(block)),
        history,
      });
    }
  }
  let sessions: SessionView[] = [];
  let sessionsError: string | null = null;
  try {
    sessions = await readSessions(source.sessions, options.treeLimit);
  } catch (error) {
    sessionsError = shownError(error);
  }
  let search: InspectorSnapshot["search"] = null;
  if (options.query !== null && options.query.trim() !== "" && source.sessions !== undefined) {
    try {
      search = { query: options.query, results: await source.sessions.search(options.query), error: null };
    } catch (error) {
      search = { query: options.query, results: [], error: shownError(error) };
    }
  }
  return {
    title: options.title,
    prompt,
    promptSha256: prompt === null ? null : await sha256Hex(prompt),
    promptTokens: prompt === null || context === undefined ? 0 : context.estimateTokens(prompt),
    reminder,
    blocks,
    sessions,
    sessionsError,
    search,
    canRestore: options.mayWrite && canRestore(context),
  };
}

async function readSessions(
  sessions: SessionManager | Session | undefined,
  treeLimit: number,
): Promise<SessionView[]> {
  if (sessions === undefined) return [];
  if (isManager(sessions)) {
    // Only the rows shown: a registry on a Durable Object bills every row a listing reads.
    const infos = (await sessions.list({ limit: MAX_SESSIONS })).slice(0, MAX_SESSIONS);
    return Promise.all(
      infos.map((info) =>
        sessionView(() => sessions.getSession(info.id), info.id, info.name, info.updated_at, treeLimit),
      ),
    );
  }
  const name = sessions.id === "" ? "Default session" : sessions.id;
  return [await sessionView(() => sessions, sessions.id, name, null, treeLimit)];
}

/** Most characters of an error message shown for a search or a session. */
const MAX_ERROR_LENGTH = 500;

function shownError(error: unknown): string {
  return clipped(isContextError(error) ? error.message : errorMessage(error), MAX_ERROR_LENGTH);
}

function isManager(value: SessionManager | Session): value is SessionManager {
  return typeof (value as SessionManager).list === "function";
}

/** One session's view; a session that cannot be opened or read is shown with its error instead. */
async function sessionView(
  open: () => Session,
  id: string,
  name: string,
  updatedAt: string | null,
  treeLimit: number,
): Promise<SessionView> {
  try {
    const session = open();
    const compactions = await session.getCompactions();
    const leaf = await session.store.getLatestLeaf();
    const tree = await readTree(session.store, leaf?.id ?? null, compactions, treeLimit);
    return {
      id,
      name,
      updatedAt,
      pathLength: await session.store.getPathLength(),
      storedMessages: tree.total,
      tree: tree.nodes,
      compactions: tree.overlays,
      error: null,
    };
  } catch (error) {
    return {
      id,
      name,
      updatedAt,
      pathLength: 0,
      storedMessages: 0,
      tree: [],
      compactions: [],
      error: shownError(error),
    };
  }
}
