import { entryId, type LoadedEntry } from "@contextblocks/core/store-kit";
import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, entryOf, isUIMessage, toolCallsOf } from "./messages.js";

/** Options of `replaceUnloadedEntries`. */
export interface UnloadOptions {
  /**
   * The text that stands in for an unloaded entry's `load_context` result. Default
   * `[unloaded: <key> from <label>]`. Keep it a pure function of the entry: it is part of the prompt prefix.
   */
  placeholder?: (entry: LoadedEntry) => string;
}

/** The default stand-in for an unloaded entry: `[unloaded: <key> from <label>]`. */
export function unloadedPlaceholder(entry: LoadedEntry): string {
  return `[unloaded: ${entry.key} from ${entry.label}]`;
}

interface TranscriptState {
  /** Results of `load_context` calls whose entry was unloaded later, by `message:part` location. */
  unloaded: Map<string, LoadedEntry>;
  /** Entries loaded and not unloaded since, in load order. */
  loaded: LoadedEntry[];
}

/**
 * Reads the load state from the transcript: a successful `load_context` call for (label, key) followed by
 * an `unload_context` call for the same (label, key) is unloaded. The transcript is what persists, so this
 * survives a restart; `ContextBlocks.loadedEntries()` only knows the calls of one instance.
 */
function readTranscript(messages: readonly ContextMessage[]): TranscriptState {
  const calls = toolCallsOf(messages);
  const unloads = calls.flatMap((call) => {
    if (call.toolName !== "unload_context" || call.outcome === "failed") return [];
    const entry = entryOf(call.input);
    return entry ? [{ ...entry, position: call.position }] : [];
  });
  const unloaded = new Map<string, LoadedEntry>();
  const loaded = new Map<string, LoadedEntry>();
  for (const call of calls) {
    if (call.toolName !== "load_context" || call.outcome !== "succeeded") continue;
    const entry = entryOf(call.input);
    if (!entry) continue;
    const id = entryId(entry);
    const later = unloads.some(
      (unload) => unload.label === entry.label && unload.key === entry.key && unload.position > call.position,
    );
    if (later) {
      if (call.result) unloaded.set(locationKey(call.result.message, call.result.part), entry);
      loaded.delete(id);
    } else {
      loaded.delete(id);
      loaded.set(id, entry);
    }
  }
  return { unloaded, loaded: [...loaded.values()] };
}

/**
 * The entries the transcript has loaded and not unloaded since, oldest load first: the durable loaded
 * state, rebuilt from messages after a restart.
 */
export function loadedEntriesFromMessages(messages: readonly ContextMessage[]): LoadedEntry[] {
  return readTranscript(messages).loaded;
}

/**
 * Returns the messages with the result of every `load_context` call that was later unloaded replaced by a
 * short placeholder. Messages without such a result are returned as they are (the same objects); changed
 * ones are copies. The input is never mutated. Works on model messages and UI messages.
 */
export function replaceUnloadedEntries<M extends ContextMessage>(
  messages: readonly M[],
  options: UnloadOptions = {},
): M[] {
  return replaceResults(messages, readTranscript(messages).unloaded, options);
}

/**
 * Returns the messages with every successful `load_context` result for one of `entries` replaced by the
 * placeholder: an unload decided outside the transcript (`unloadSkill` over a stored session). Unchanged
 * messages are the same objects, so a caller can tell which ones changed.
 */
export function replaceEntryResults<M extends ContextMessage>(
  messages: readonly M[],
  entries: readonly LoadedEntry[],
  options: UnloadOptions = {},
): M[] {
  const wanted = new Set(entries.map((entry) => entryId(entry)));
  const unloaded = new Map<string, LoadedEntry>();
  for (const call of toolCallsOf(messages)) {
    if (call.toolName !== "load_context" || call.outcome !== "succeeded" || !call.result) continue;
    const entry = entryOf(call.input);
    if (entry && wanted.has(entryId(entry))) {
      unloaded.set(locationKey(call.result.message, call.result.part), entry);
    }
  }
  return replaceResults(messages, unloaded, options);
}

function replaceResults<M extends ContextMessage>(
  messages: readonly M[],
  unloaded: ReadonlyMap<string, LoadedEntry>,
  options: UnloadOptions,
): M[] {
  if (unloaded.size === 0) return [...messages];
  const placeholder = options.placeholder ?? unloadedPlaceholder;
  return messages.map((message, index) => {
    const at = (part: number) => unloaded.get(locationKey(index, part));
    return isUIMessage(message)
      ? (replaceInUIMessage(message, at, placeholder) as M)
      : (replaceInModelMessage(message, at, placeholder) as M);
  });
}

function locationKey(message: number, part: number): string {
  return `${message}:${part}`;
}

function replaceInModelMessage(
  message: ModelMessage,
  unloadedAt: (part: number) => LoadedEntry | undefined,
  placeholder: (entry: LoadedEntry) => string,
): ModelMessage {
  if (message.role !== "tool" && message.role !== "assistant") return message;
  if (typeof message.content === "string") return message;
  let changed = false;
  const content = message.content.map((part, index) => {
    if (part.type !== "tool-result") return part;
    const entry = unloadedAt(index);
    if (!entry) return part;
    const value = placeholder(entry);
    if (part.output.type === "text" && part.output.value === value) return part;
    changed = true;
    return { ...part, output: { type: "text" as const, value } };
  });
  return changed ? ({ ...message, content } as ModelMessage) : message;
}

function replaceInUIMessage(
  message: UIMessage,
  unloadedAt: (part: number) => LoadedEntry | undefined,
  placeholder: (entry: LoadedEntry) => string,
): UIMessage {
  let changed = false;
  const parts = message.parts.map((part, index) => {
    const entry = unloadedAt(index);
    if (!entry) return part;
    const value = placeholder(entry);
    const output = (part as { output?: unknown }).output;
    // Keep the output's form: core's outcome object, or a plain string in transcripts written before it.
    if (typeof output === "string") {
      if (output === value) return part;
      changed = true;
      return { ...part, output: value } as typeof part;
    }
    const current = output as { isError?: unknown; text?: unknown } | undefined;
    if (current?.isError === false && current.text === value) return part;
    changed = true;
    return { ...part, output: { isError: false, text: value } } as typeof part;
  });
  return changed ? { ...message, parts } : message;
}
