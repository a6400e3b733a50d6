import { describeValue } from "./describe-value.js";
import { ContextError } from "./errors.js";
import type { WriteSource } from "./types.js";

/** How a block was written: its whole content, an append, or one keyed entry set or deleted. */
export type BlockWriteAction = "set" | "append" | "edit" | "restore" | "set-entry" | "delete-entry";

/** A write to a block's provider succeeded (through a method or a tool). `key` names the entry of an entry write. */
export interface BlockWrittenEvent {
  type: "block-written";
  label: string;
  action: BlockWriteAction;
  key?: string;
  /** Where the write came from (a whole-block write: set, append, edit, restore). */
  source?: WriteSource;
  /** The block's version after the write, when the context keeps block history. */
  version?: number;
}

/**
 * The prompt was frozen in this instance: rendered from the blocks and stored (`origin: "rendered"`), or
 * adopted as the prompt store had it (`origin: "stored"`, a cold start). Once per instance until a refresh.
 */
export interface PromptFrozenEvent {
  type: "prompt-frozen";
  prompt: string;
  /** Lowercase hex SHA-256 of `prompt`. */
  hash: string;
  origin: "rendered" | "stored";
}

/** `refreshSystemPrompt()` rendered and stored a new frozen prompt. */
export interface PromptRefreshedEvent {
  type: "prompt-refreshed";
  prompt: string;
  /** Lowercase hex SHA-256 of `prompt`. */
  hash: string;
}

/** `reminder({ sending: true })` returned a reminder the host is about to send (the AI SDK adapter does). */
export interface ReminderSentEvent {
  type: "reminder-sent";
  reminder: string;
  /** The labels of the `whenChanged: "remind"` blocks the reminder carries. */
  labels: string[];
}

/** What `ContextBlocks.subscribe` listeners hear. */
export type ContextEvent = BlockWrittenEvent | PromptFrozenEvent | PromptRefreshedEvent | ReminderSentEvent;

/** A listener; what it throws (or rejects with) is caught and never fails the write that caused it. */
export type ContextListener = (event: ContextEvent) => void;

/**
 * Listeners of one emitter. Each is called in turn after the operation succeeded; a listener that throws
 * does not stop the others, and a returned promise is not awaited (its rejection is swallowed).
 */
export class Listeners<Event> {
  /** Made on the first subscription: an instance nobody subscribes to never allocates it. */
  #listeners: Set<(event: Event) => void> | undefined;

  add(listener: (event: Event) => void): () => void {
    if (typeof listener !== "function") {
      throw new ContextError(
        "INVALID_INPUT",
        `subscribe: expected a function, got ${describeValue(listener)}`,
      );
    }
    // A wrapper per subscription: the same function subscribed twice is called twice and unsubscribed once.
    const wrapped = (event: Event) => listener(event);
    this.#listeners ??= new Set();
    const listeners = this.#listeners;
    listeners.add(wrapped);
    return () => {
      listeners.delete(wrapped);
    };
  }

  emit(event: Event): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      try {
        const result = listener(event) as unknown;
        if (result instanceof Promise) result.catch(() => undefined);
      } catch {
        // A listener's failure never fails the operation that emitted the event.
      }
    }
  }

  get size(): number {
    return this.#listeners?.size ?? 0;
  }
}
