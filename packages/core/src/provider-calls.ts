import { ContextError, isContextError } from "./errors.js";
import { rememberUntilFailure } from "./remember.js";
import type { ContextProvider } from "./types.js";

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
  private readonly ready = new WeakMap<object, Map<string, () => Promise<void>>>();

  constructor(private readonly timeoutMs: number | undefined) {}

  /** Calls `init(label)` once; parallel first uses share it; a failed init is tried again next time. */
  init(label: string, provider: ContextProvider | undefined): Promise<void> {
    if (provider === undefined || typeof provider.init !== "function") return Promise.resolve();
    let byLabel = this.ready.get(provider);
    if (!byLabel) {
      byLabel = new Map();
      this.ready.set(provider, byLabel);
    }
    let once = byLabel.get(label);
    if (!once) {
      once = rememberUntilFailure(() => this.call(label, async () => provider.init?.(label)));
      byLabel.set(label, once);
    }
    return once();
  }

  /** Runs one provider call for `label`: init first, then the call, wrapped and under the deadline. */
  async run<T>(label: string, provider: ContextProvider | undefined, call: () => Promise<T>): Promise<T> {
    await this.init(label, provider);
    return this.call(label, call);
  }

  /** Runs a call with error wrapping and the deadline, without init. */
  async call<T>(label: string, call: () => Promise<T> | T): Promise<T> {
    try {
      return await this.withDeadline(label, Promise.resolve().then(call));
    } catch (error) {
      if (isContextError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new ContextError("PROVIDER_FAILED", `Block "${label}": provider failed: ${message}`, {
        label,
        cause: error,
      });
    }
  }

  private withDeadline<T>(label: string, pending: Promise<T>): Promise<T> {
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
