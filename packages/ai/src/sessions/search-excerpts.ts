import { ContextError, estimateTokens } from "@contextblocks/core";
import { describeValue, neutralizeContent, wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type SearchResult, type SessionManager, textOfMessage } from "@contextblocks/sessions";
import { messageKeyOf } from "@contextblocks/sessions/store-kit";

/**
 * Search hits with the turns around them (as Mastra's `messageRange` returns a hit with its neighbours): an
 * answer often sits in the turn after the one that matched, or the question in the turn before it. Each hit,
 * marked `>`, is shown under its day (the `createdAt` its message carries, else the day it was stored) with
 * its context: the neighbouring turns the search ranked but kept as context of the hit (`hit.context`,
 * already capped in tokens), which cost no read; a hit without context gets its parent and its first child
 * on its branch. The whole result fits a token budget (default 300). Every hit gets its share of the budget
 * first (its text cut around its first matching word), then the best hits get the turns around them with
 * what is left.
 */
export interface SearchExcerptOptions {
  /** Hits asked of the search. Default 10. */
  limit?: number;
  /** Tokens the whole result may cost (`estimateTokens`). Default 300. */
  maxTokens?: number;
  /** Characters of a hit's own text shown at most (around its first matching word). Default 240. */
  hitCharacters?: number;
  /** Characters of a neighbouring turn shown at most. Default 100. */
  neighbourCharacters?: number;
}

/** One turn of the result, by session and message id (for callers that measure or link). */
export interface ExcerptTurn {
  sessionId: string | undefined;
  id: string;
  /** The search hit itself (true) or a turn beside it. */
  hit: boolean;
}

export interface SearchExcerpts {
  /** What the model reads; `null` when nothing was found. */
  text: string | null;
  /** The turns shown, hits and neighbours, in the order shown. */
  turns: ExcerptTurn[];
}

interface Line {
  turn: ExcerptTurn;
  role: string;
  text: string;
}

const minimumClip = 40;
/** Share of the budget the hits' own texts may take; the turns around them get the rest. */
const hitShare = 0.7;

export async function searchExcerpts(
  manager: SessionManager,
  query: string,
  options: SearchExcerptOptions = {},
): Promise<SearchExcerpts> {
  const {
    limit,
    maxTokens: budget,
    hitCharacters,
    neighbourCharacters,
  } = checkExcerptOptions(options, "searchExcerpts");
  const hits = await manager.search(query, { limit });
  if (hits.length === 0) return { text: null, turns: [] };
  const words = queryWords(query);
  const shown = new Set(hits.map((hit) => messageKeyOf(hit.sessionId, hit.id)));
  // First every hit, each its share of the budget (at most `hitCharacters`, around its first matching
  // word); then, best hit first, the turns around it with what is left.
  // The day a hit's message carries (its `createdAt`), else the day the store wrote it.
  const days = await Promise.all(hits.map((hit) => dayOfHit(manager, hit)));
  const headers = days.map((day) => (day === undefined ? "---" : `--- ${day}`));
  const groups = hits.map((hit) => ({
    hit,
    before: [] as Line[],
    own: { turn: { sessionId: hit.sessionId, id: hit.id, hit: true }, role: hit.role, text: "" } as Line,
    after: [] as Line[],
  }));
  const cost = () =>
    estimateTokens(groups.map((group, index) => render(headers[index] ?? "---", linesOf(group))).join("\n"));
  // The hits take at most `hitShare` of the budget: their texts are cut shorter until they fit.
  for (let share = hitCharacters; ; share = Math.floor(share * 0.85)) {
    for (const group of groups) group.own.text = clip(group.hit.content, share, words);
    if (cost() <= budget * hitShare || share <= minimumClip) break;
  }
  for (const group of groups) {
    if (cost() >= budget - minimumClip / 4) break;
    const context = group.hit.context ?? [];
    const around =
      context.length > 0 ? contextAround(group.hit, context) : await turnsAround(manager, group.hit);
    for (const [side, lines] of [
      ["before", around.before],
      ["after", around.after],
    ] as const) {
      for (const line of lines) {
        if (shown.has(messageKeyOf(line.turn.sessionId, line.turn.id))) continue;
        const left = (budget - cost()) * 4 - line.role.length - 4;
        if (left < minimumClip) continue;
        group[side].push({ ...line, text: clip(line.text, Math.min(neighbourCharacters, left), words) });
        if (cost() > budget) group[side].pop();
        else shown.add(messageKeyOf(line.turn.sessionId, line.turn.id));
      }
    }
  }
  const turns = groups.flatMap((group) => linesOf(group).map((line) => line.turn));
  const text = groups.map((group, index) => render(headers[index] ?? "---", linesOf(group))).join("\n");
  // Every line this writes opens with `---`, `>` or a role; a stored text may still break a line where
  // flattening keeps it (NEL), and the line after must not open with the prompt's rule, as a section would.
  return { text: neutralizeContent(text), turns };
}

/**
 * The options with their defaults, each a positive whole number, else an `INVALID_CONFIG` error that names it:
 * the hits are cut shorter until they fit, which `NaN` or `Infinity` as `hitCharacters` never does.
 */
export function checkExcerptOptions(
  options: SearchExcerptOptions,
  caller: string,
): Required<SearchExcerptOptions> {
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${caller}: options must be an object, got ${describeValue(options)}`,
    );
  }
  const checked = {
    limit: options.limit ?? 10,
    maxTokens: options.maxTokens ?? 300,
    hitCharacters: options.hitCharacters ?? 240,
    neighbourCharacters: options.neighbourCharacters ?? 100,
  };
  for (const [name, value] of Object.entries(checked)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${caller}: ${name} must be a positive whole number, got ${describeValue(value)}`,
      );
    }
  }
  return checked;
}

function linesOf(group: { before: Line[]; own: Line; after: Line[] }): Line[] {
  return [...group.before, group.own, ...group.after];
}

function render(header: string, lines: readonly Line[]): string {
  return [header, ...lines.map((line) => `${line.turn.hit ? ">" : " "} ${line.role}: ${line.text}`)].join(
    "\n",
  );
}

/** The hit's context turns (chosen by the search), before and after it as they stand on its branch. */
function contextAround(
  hit: SearchResult,
  context: NonNullable<SearchResult["context"]>,
): { before: Line[]; after: Line[] } {
  const line = (turn: (typeof context)[number]): Line => ({
    turn: { sessionId: hit.sessionId, id: turn.id, hit: false },
    role: turn.role,
    text: turn.text,
  });
  return {
    before: context.filter((turn) => turn.position === "before").map(line),
    after: context.filter((turn) => turn.position !== "before").map(line),
  };
}

/** The hit's parent and its first child on its branch (one read each), as lines. */
async function turnsAround(
  manager: SessionManager,
  hit: SearchResult,
): Promise<{ before: Line[]; after: Line[] }> {
  if (hit.sessionId === undefined) return { before: [], after: [] };
  try {
    const store = manager.getSession(hit.sessionId).store;
    const node = await store.getNode(hit.id);
    const parent = node?.parentId ? await store.getMessage(node.parentId) : null;
    const [child] = await store.getBranches(hit.id);
    const line = (message: { id: string; role: string } & Parameters<typeof textOfMessage>[0]): Line => ({
      turn: { sessionId: hit.sessionId, id: message.id, hit: false },
      role: message.role,
      text: textOfMessage(message),
    });
    const before = parent === null || textOfMessage(parent).length === 0 ? [] : [line(parent)];
    const after = child === undefined || textOfMessage(child).length === 0 ? [] : [line(child)];
    return { before, after };
  } catch {
    // A session the manager cannot open (deleted meanwhile): the hit alone.
    return { before: [], after: [] };
  }
}

/**
 * The day of a hit, as words: the `createdAt` its message carries (a chat client stamps a message when it is
 * written, an import keeps the original time), else the time the store gave the hit (when its row was written).
 */
async function dayOfHit(manager: SessionManager, hit: SearchResult): Promise<string | undefined> {
  if (hit.sessionId !== undefined) {
    try {
      const message = await manager.getSession(hit.sessionId).store.getMessage(hit.id);
      const own = message?.createdAt as unknown;
      const time = own instanceof Date ? own.toISOString() : typeof own === "string" ? own : undefined;
      if (time !== undefined && !Number.isNaN(Date.parse(time))) return dayOf(time);
    } catch {
      // A session the manager cannot open (deleted meanwhile): the store's time.
    }
  }
  return hit.createdAt === undefined ? undefined : dayOf(hit.createdAt);
}

/** Lowercased words of three letters or more, cut to five letters (a crude stem: "painting" finds "paint"). */
function queryWords(query: string): string[] {
  return [...new Set((query.toLowerCase().match(/\p{L}{3,}/gu) ?? []).map((word) => word.slice(0, 5)))];
}

/**
 * Characters of a turn's text an excerpt is cut from: far more than one shows, and a bound on the work for a
 * pasted file as large as a row holds (2 MB on a Durable Object), which is cut again each time the hits are
 * shortened to fit the budget.
 */
const excerptSource = 65_536;

/**
 * At most `limit` characters of `text`, around the first query word it contains in its first
 * `excerptSource` characters, with "…" where cut.
 */
function clip(text: string, limit: number, words: readonly string[]): string {
  const long = text.length > excerptSource;
  const flat = wellFormedPrefix(text, excerptSource).replace(/\s+/g, " ").trim();
  if (flat.length <= limit && !long) return flat;
  const lower = flat.toLowerCase();
  let first = -1;
  for (const word of words) {
    const at = lower.indexOf(word);
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  const around =
    first <= limit / 3 ? 0 : Math.max(0, Math.min(first - Math.floor(limit / 3), flat.length - limit));
  // Both cuts fall between characters, never inside a surrogate pair: a lone surrogate in the tool result is
  // text some model APIs refuse as invalid JSON.
  const start = isLowSurrogate(flat.charCodeAt(around)) ? around + 1 : around;
  const end = around + limit - 2;
  const body = wellFormedPrefix(flat, end).slice(start);
  return `${start > 0 ? "…" : ""}${body}${end < flat.length || long ? "…" : ""}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** "8 May 2023" for an ISO time or SQLite's "2023-05-08 13:56:00"; the text itself when it is neither. */
function dayOf(time: string): string {
  const date = new Date(/^\d{4}-\d{2}-\d{2} /.test(time) ? `${time.replace(" ", "T")}Z` : time);
  if (Number.isNaN(date.getTime())) return time;
  return date.toLocaleDateString("en-GB", {
    day: "numeric",
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  });
}
