import { describeValue, errorMessage } from "./describe-value.js";
import { ContextError, isContextError } from "./errors.js";
import { rememberUntilFailure } from "./remember.js";
import type { ContextProvider, SyncReadableProvider } from "./types.js";

/**
 * Every call into a provider goes through here: `init(label)` once per provider and label before first
 * use, failures wrapped as `PROVIDER_FAILED` naming the block (providers throw plain errors; only core
 * mints codes), and an optional deadline.
 *
 * A call past `timeoutMs` fails with `PROVIDER_TIMEOUT` and releases the block's queue, so later reads
 * and writes of that block go on. The provider's call itself cannot be cancelled: a late answer is
 * ignored, and a late write may still land in storage after the ones queued behind it.
 */
export class ProviderCalls {
  /**
   * Per provider and label: the pending (or failed-and-forgotten) init, or `true` once it succeeded. A Map,
   * not a WeakMap: it lives as long as the instance, which holds its providers anyway, and weak maps cost
   * the garbage collector extra work on every cycle. Made on the first init: a wake whose only call is the
   * prompt store's read of a provider without `init` makes none.
   */
  #ready: Map<object, Map<string, (() => Promise<void>) | true>> | undefined;

  constructor(private readonly timeoutMs: number | undefined) {}

  /**
   * Calls `init(label)` once; parallel first uses share it; a failed init is tried again next time.
   * `undefined` when there is nothing to wait for: no `init`, an init that already succeeded, or one that
   * returned synchronously (most do), so the call after it needs no extra turn of the event loop.
   */
  initNow(label: string, provider: ContextProvider | undefined): Promise<void> | undefined {
    if (provider === undefined || typeof provider.init !== "function") return undefined;
    this.#ready ??= new Map();
    let byLabel = this.#ready.get(provider);
    if (!byLabel) {
      byLabel = new Map();
      this.#ready.set(provider, byLabel);
    }
    const once = byLabel.get(label);
    if (once === true) return undefined;
    if (once !== undefined) return once();
    let result: unknown;
    try {
      result = provider.init(label);
    } catch (error) {
      return Promise.reject(this.#failure(label, error));
    }
    if (!isPromiseLike(result)) {
      byLabel.set(label, true);
      return undefined;
    }
    const table = byLabel;
    const started = Promise.resolve(result).then(() => undefined);
    const remembered = rememberUntilFailure(() =>
      this.call(label, () => started).then(() => {
        table.set(label, true);
      }),
    );
    table.set(label, remembered);
    const attempt = remembered();
    attempt.catch(() => {
      if (table.get(label) === remembered) table.delete(label);
    });
    return attempt;
  }

  /** `initNow` as a promise. */
  init(label: string, provider: ContextProvider | undefined): Promise<void> {
    return this.initNow(label, provider) ?? Promise.resolve();
  }

  /** Runs one provider call for `label`: init first, then the call, wrapped and under the deadline. */
  run<T>(label: string, provider: ContextProvider | undefined, call: () => Promise<T>): Promise<T> {
    const initializing = this.initNow(label, provider);
    if (initializing === undefined) return this.call(label, call);
    return initializing.then(() => this.call(label, call));
  }

  /**
   * Reads `provider` for `label` (init first): the value itself when the provider answers synchronously
   * (`getSync`, once its init has succeeded), else a promise of what `get()` resolves to, as `run` gives it.
   * A synchronous read finishes before any deadline could pass, so it needs none; its failure is wrapped
   * as `run` wraps one (a rejected promise).
   */
  read(label: string, provider: ContextProvider): unknown {
    const initializing = this.initNow(label, provider);
    if (initializing === undefined && hasGetSync(provider)) {
      let value: unknown;
      try {
        value = provider.getSync();
      } catch (error) {
        return Promise.reject(this.#failure(label, error));
      }
      if (value !== undefined) return value;
    }
    const get = () => provider.get();
    return initializing === undefined
      ? this.call(label, get)
      : initializing.then(() => this.call(label, get));
  }

  /**
   * `read` for a call that answers either way (`getWithFingerprint`): its value itself when it answered
   * synchronously and no init was pending, else a promise as `run` gives it.
   */
  readEither(label: string, provider: ContextProvider, read: () => unknown): unknown {
    const initializing = this.initNow(label, provider);
    if (initializing !== undefined) return initializing.then(() => this.call(label, read));
    let value: unknown;
    try {
      value = read();
    } catch (error) {
      return Promise.reject(this.#failure(label, error));
    }
    return isPromiseLike(value) ? this.call(label, () => value) : value;
  }

  /** Runs a call with error wrapping and the deadline, without init. */
  call<T>(label: string, call: () => Promise<T> | T): Promise<T> {
    let result: Promise<T> | T;
    try {
      result = call();
    } catch (error) {
      return Promise.reject(this.#failure(label, error));
    }
    return this.#withDeadline(label, Promise.resolve(result)).catch((error: unknown) => {
      throw this.#failure(label, error);
    });
  }

  /** A provider's failure as `PROVIDER_FAILED` naming the block; core's own errors pass unchanged. */
  #failure(label: string, error: unknown): ContextError {
    if (isContextError(error)) return error;
    return new ContextError("PROVIDER_FAILED", `Block "${label}": provider failed: ${errorMessage(error)}`, {
      label,
      cause: error,
    });
  }

  #withDeadline<T>(label: string, pending: Promise<T>): Promise<T> {
    const timeoutMs = this.timeoutMs;
    if (timeoutMs === undefined) return pending;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ContextError(
              "PROVIDER_TIMEOUT",
              `Block "${label}": provider did not answer within ${timeoutMs} ms`,
              { label },
            ),
          ),
        timeoutMs,
      );
    });
    // A late failure of the abandoned call must not surface as an unhandled rejection.
    pending.catch(() => undefined);
    return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
  }
}

function hasGetSync(provider: ContextProvider): provider is SyncReadableProvider {
  return typeof (provider as Partial<SyncReadableProvider>).getSync === "function";
}

/**
 * A provider's text answer (`get()`, `search(query)`, `load(key)`): the text, or `null` for none. `undefined`
 * reads as none, as agents/context reads it (a JavaScript provider may forget the `null`); any other value
 * fails with `PROVIDER_FAILED` naming the block and the method, so it never reaches the model as its answer.
 */
export function providerText(label: string, method: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  throw new ContextError(
    "PROVIDER_FAILED",
    `Block "${label}": its provider's ${method} returned ${describeValue(value)}, not a string or null`,
    { label },
  );
}

/** True for a promise or any other thenable. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
