import type { ContextProvider } from "@contextblocks/core";
import type { ConformanceOptions, ProviderFactory } from "./options.js";

/**
 * Makes the providers of one test and releases them after it. Every instance (factory-made, reopened or
 * namespaced) is passed to `options.cleanup` once, newest first.
 */
export class ProviderFixture<P extends ContextProvider> {
  private readonly instances: P[] = [];

  constructor(
    private readonly factory: ProviderFactory<P>,
    private readonly options: ConformanceOptions<P>,
  ) {}

  /** A fresh provider from the factory, initialised with `label` when one is given. */
  async create(label?: string): Promise<P> {
    const provider = this.track(await this.factory());
    if (label !== undefined) await initialize(provider, label);
    return provider;
  }

  /** A new instance on the same backing store as `provider` (a simulated restart), initialised with `label`. */
  async reopen(provider: P, label?: string): Promise<P> {
    const reopen = this.options.reopen;
    if (!reopen) throw new Error("conformance: this check needs the `reopen` option");
    const reopened = this.track(await reopen(provider));
    if (label !== undefined) await initialize(reopened, label);
    return reopened;
  }

  /** A provider on the same backing store in another namespace, initialised with `label`. */
  async namespace(provider: P, namespace: string, label?: string): Promise<P> {
    const open = this.options.namespace;
    if (!open) throw new Error("conformance: this check needs the `namespace` option");
    const namespaced = this.track(await open(provider, namespace));
    if (label !== undefined) await initialize(namespaced, label);
    return namespaced;
  }

  /** Runs `cleanup` on every instance made since the last call. Throws the first failure after trying all. */
  async release(): Promise<void> {
    const instances = [...new Set(this.instances)].reverse();
    this.instances.length = 0;
    const cleanup = this.options.cleanup;
    if (!cleanup) return;
    const failures: unknown[] = [];
    for (const instance of instances) {
      try {
        await cleanup(instance);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  private track(provider: P): P {
    if (typeof provider !== "object" || provider === null) {
      throw new TypeError(
        `conformance: the factory returned ${provider === null ? "null" : typeof provider}`,
      );
    }
    this.instances.push(provider);
    return provider;
  }
}

/** Calls `init(label)` when the provider has one, as `ContextBlocks` does before first use. */
export async function initialize(provider: ContextProvider, label: string): Promise<void> {
  if (typeof provider.init === "function") await provider.init(label);
}
