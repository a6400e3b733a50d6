import { describeValue } from "./describe-value.js";
import { type DriftPolicy, type ExpectedHeader, findDrift } from "./drift.js";
import { ContextError } from "./errors.js";
import { promptFingerprint } from "./fingerprint.js";
import { isPromiseLike, type ProviderCalls } from "./provider-calls.js";
import type { FingerprintingPromptStore, WritableContextProvider } from "./types.js";

/** What the stored prompt is checked against: the configuration's headers and their folded hash. */
export interface PromptConfiguration {
  expectedHeaders(): readonly ExpectedHeader[];
  configurationFingerprint(): string;
}

function isFingerprinting(store: WritableContextProvider): store is FingerprintingPromptStore {
  return typeof (store as Partial<FingerprintingPromptStore>).getWithFingerprint === "function";
}

/** The label the prompt store is initialised with. */
export const SYSTEM_PROMPT_LABEL = "_system_prompt";

/** What a cold start found in the prompt store. */
export type StoredPrompt =
  | { state: "none" }
  /** The stored prompt matches the configuration, or the policy keeps it anyway. */
  | { state: "current"; prompt: string }
  /** The stored prompt drifted from the configuration and the policy is to render it again. */
  | { state: "drifted"; prompt: string };

const NONE: StoredPrompt = Object.freeze({ state: "none" });

/**
 * The frozen prompt: kept in memory once rendered or adopted, persisted in the prompt store (when there is
 * one) so a cold start serves the very string the model cached. Reading (`stored`) never writes; only
 * `store` does, and the facade calls it from `freezeSystemPrompt` and `refreshSystemPrompt` alone.
 */
export class FrozenPrompt {
  #snapshot: string | null = null;
  readonly #store: WritableContextProvider | undefined;
  readonly #calls: ProviderCalls;
  readonly #drift: DriftPolicy;
  readonly #onDrift: (reason: string) => void;

  constructor(
    store: WritableContextProvider | undefined,
    calls: ProviderCalls,
    drift: DriftPolicy,
    onDrift: (reason: string) => void,
  ) {
    this.#store = store;
    this.#calls = calls;
    this.#drift = drift;
    this.#onDrift = onDrift;
  }

  /** The frozen prompt in memory, or `null` before the first freeze or adoption. */
  current(): string | null {
    return this.#snapshot;
  }

  /**
   * Reads the prompt store on a cold start and checks it against the configuration. A current stored
   * prompt is adopted as the frozen one (in memory only); a drifted one is reported through `onDrift`
   * and left for the caller to re-render (policy `"rerender"`) or adopted (policy `"keep"`). Answers
   * synchronously when the store reads synchronously (`getSync`), else with a promise.
   */
  stored(configuration: PromptConfiguration): StoredPrompt | Promise<StoredPrompt> {
    if (this.#snapshot !== null) return { state: "current", prompt: this.#snapshot };
    const store = this.#store;
    if (!store) return NONE;
    if (isFingerprinting(store)) {
      const record = this.#calls.readEither(SYSTEM_PROMPT_LABEL, store, () => store.getWithFingerprint());
      if (isPromiseLike(record)) {
        return Promise.resolve(record).then((read) => this.#checkRecord(read, configuration));
      }
      return this.#checkRecord(record, configuration);
    }
    const value = this.#calls.read(SYSTEM_PROMPT_LABEL, store);
    if (isPromiseLike(value)) return Promise.resolve(value).then((read) => this.#check(read, configuration));
    return this.#check(value, configuration);
  }

  /**
   * The fingerprint stored with the prompt decides when it is the one this configuration would store: the
   * prompt was rendered from this very configuration, so the header check could only agree. Any other
   * fingerprint, or none, goes to the full check.
   */
  #checkRecord(read: unknown, configuration: PromptConfiguration): StoredPrompt {
    if (read === null || read === undefined) return this.#check(null, configuration);
    const { content, fingerprint } = read as { content?: unknown; fingerprint?: unknown };
    if (
      typeof content === "string" &&
      typeof fingerprint === "string" &&
      this.#snapshot === null &&
      fingerprint === promptFingerprint(configuration.configurationFingerprint(), content)
    ) {
      this.#snapshot = content;
      return { state: "current", prompt: content };
    }
    return this.#check(content, configuration);
  }

  #check(read: unknown, configuration: PromptConfiguration): StoredPrompt {
    // Another call may have frozen a prompt while this read was in flight.
    if (this.#snapshot !== null) return { state: "current", prompt: this.#snapshot };
    const value = read ?? null;
    if (value === null) return NONE;
    if (typeof value !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `The prompt store returned ${describeValue(value)}, not a string`,
      );
    }
    const reason = findDrift(value, configuration.expectedHeaders());
    if (reason !== null) {
      this.#onDrift(`stored prompt does not match the block configuration: ${reason}`);
      if (this.#drift === "rerender") return { state: "drifted", prompt: value };
    }
    this.#snapshot = value;
    return { state: "current", prompt: value };
  }

  /**
   * Persists a newly rendered prompt (when there is a store) with the fingerprint of the configuration it
   * was rendered from, and makes it the frozen one.
   */
  async store(prompt: string, configuration: PromptConfiguration): Promise<string> {
    const store = this.#store;
    if (store && isFingerprinting(store)) {
      const fingerprint = promptFingerprint(configuration.configurationFingerprint(), prompt);
      await this.#calls.run(SYSTEM_PROMPT_LABEL, store, () => store.set(prompt, { fingerprint }));
    } else if (store) {
      // A store that cannot keep a fingerprint is written exactly as before (`set(prompt)`).
      await this.#calls.run(SYSTEM_PROMPT_LABEL, store, () => store.set(prompt));
    }
    this.#snapshot = prompt;
    return prompt;
  }
}
