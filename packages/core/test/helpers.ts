import { vi } from "vitest";
import type {
  ContextProvider,
  SearchProvider,
  SkillProvider,
  WritableContextProvider,
} from "../src/index.js";

export const RULE = "═".repeat(46);

/** A promise with its resolve and reject handles, to control when a provider call settles. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run (no timers involved). */
export async function settle(rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round++) await Promise.resolve();
}

/** A read-only provider whose `get` is a spy. */
export function readonlyProvider(content: string | null): ContextProvider & {
  get: ReturnType<typeof vi.fn<() => Promise<string | null>>>;
} {
  return { get: vi.fn(async () => content) };
}

/** A read-only provider whose value the test changes by assigning `value`. */
export class ChangingProvider implements ContextProvider {
  constructor(public value: string | null) {}
  readonly get = vi.fn(async () => this.value);
}

/** A writable provider that records every call; its storage is `value`. */
export class RecordingProvider implements WritableContextProvider {
  readonly inits: string[] = [];
  readonly writes: string[] = [];
  constructor(public value: string | null = null) {}
  readonly init = vi.fn((label: string) => {
    this.inits.push(label);
  });
  readonly get = vi.fn(async () => this.value);
  readonly set = vi.fn(async (content: string) => {
    this.writes.push(content);
    this.value = content;
  });
}

/** A writable provider that stores nothing and fails every write. */
export class FailingProvider implements WritableContextProvider {
  readonly error = new Error("disk full");
  constructor(public value: string | null = null) {}
  readonly get = vi.fn(async () => this.value);
  readonly set = vi.fn(async (_content: string): Promise<void> => {
    throw this.error;
  });
}

/** A minimal keyed search provider (no ranking), recording its writes. */
export class KeyedSearchProvider implements SearchProvider {
  readonly entries = new Map<string, string>();
  readonly get = vi.fn(async () =>
    this.entries.size === 0 ? null : `${this.entries.size} entries indexed.`,
  );
  readonly search = vi.fn(async (query: string) => {
    const hits = [...this.entries].filter(([, content]) => content.includes(query));
    return hits.length === 0 ? null : hits.map(([key, content]) => `[${key}]\n${content}`).join("\n\n");
  });
  readonly set = vi.fn(async (key: string, content: string) => {
    this.entries.set(key, content);
  });
  readonly delete = vi.fn(async (key: string) => {
    this.entries.delete(key);
  });
}

/** A minimal loadable (skills) provider. */
export class KeyedSkillProvider implements SkillProvider {
  readonly entries = new Map<string, { content: string; description?: string }>();
  readonly get = vi.fn(async () =>
    this.entries.size === 0
      ? null
      : [...this.entries].map(([key, entry]) => `- ${key}: ${entry.description ?? ""}`).join("\n"),
  );
  readonly load = vi.fn(async (key: string) => this.entries.get(key)?.content ?? null);
  readonly set = vi.fn(async (key: string, content: string, description?: string) => {
    this.entries.set(key, description === undefined ? { content } : { content, description });
  });
}

/** Runs `promise` and returns the error it rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

/** Runs `action` and returns what it throws (fails the test when it does not throw). */
export function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
