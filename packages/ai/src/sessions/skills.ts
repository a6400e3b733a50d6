import { ContextError } from "@contextblocks/core";
import type { LoadedEntry } from "@contextblocks/core/store-kit";
import { isCompactionMessage, type Session, type SessionMessage } from "@contextblocks/sessions";
import type { UIMessage } from "ai";
import { loadedEntriesFromMessages, replaceEntryResults, type UnloadOptions } from "../unload.js";

/**
 * Unloads a skill of a session: every stored `load_context` result for (label, key) is replaced by the
 * unload placeholder (`options.placeholder`, default `[unloaded: <key> from <label>]`; the tokens are
 * reclaimed from the next turn on); the skill can be loaded again. False when nothing was loaded (in this
 * instance or in the stored history).
 */
export async function unloadSkill(
  session: Session,
  label: string,
  key: string,
  options: UnloadOptions = {},
): Promise<boolean> {
  if (typeof label !== "string" || typeof key !== "string") {
    throw new ContextError("INVALID_INPUT", "unloadSkill: label and key must be strings");
  }
  const wasLoaded = session.context.unloadEntry(label, key);
  const changed = stillLoaded(await session.getHistory(), { label, key }, options);
  for (const message of changed) await session.updateMessage(message);
  return wasLoaded || changed.length > 0;
}

/**
 * The loaded skills of a session as `label:key` strings, read from its stored history (so they survive a
 * restart): a `load_context` result not unloaded since (nor replaced by `options.placeholder`).
 */
export async function loadedSkillKeys(session: Session, options: UnloadOptions = {}): Promise<Set<string>> {
  const history = await session.getHistory();
  const loaded = loadedEntriesFromMessages(asTranscript(history));
  // A result `unloadSkill` already replaced still reads as loaded to the transcript rule: keep the entries
  // whose result is still there in full.
  const live = loaded.filter((entry) => stillLoaded(history, entry, options).length > 0);
  return new Set(live.map((entry) => `${entry.label}:${entry.key}`));
}

/**
 * The stored messages whose `load_context` result for `entry` is still in full, with that result replaced
 * by the placeholder. Summary messages of overlays are not stored, so they are left out.
 */
function stillLoaded(
  history: readonly SessionMessage[],
  entry: LoadedEntry,
  options: UnloadOptions,
): SessionMessage[] {
  const transcript = asTranscript(history);
  const rewritten = replaceEntryResults(transcript, [entry], options);
  const changed: SessionMessage[] = [];
  rewritten.forEach((after, index) => {
    const before = history[index] as SessionMessage;
    if (after !== transcript[index] && !isCompactionMessage(before)) changed.push(after as SessionMessage);
  });
  return changed;
}

/** Session messages are the AI SDK's UI messages, stored; their parts are typed loosely (any `type`). */
function asTranscript(history: readonly SessionMessage[]): UIMessage[] {
  return history as unknown as UIMessage[];
}
