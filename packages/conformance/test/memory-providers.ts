import type { ContextProvider, WritableContextProvider } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";

/** A read-only provider over a InMemoryStore: what a host's static or externally managed block looks like. */
export class MemoryReadOnlyProvider implements ContextProvider {
  label = "";

  constructor(readonly store = new InMemoryStore()) {}

  init(label: string): void {
    this.label = label;
  }

  async get(): Promise<string | null> {
    return this.store.blocks.get(this.label) ?? null;
  }
}

/**
 * A writable provider whose blocks live under a namespace in a shared InMemoryStore. The key is the JSON of
 * the pair, so no namespace and label join into another pair's key (a "namespace/label" key would).
 */
export class NamespacedMemoryProvider implements WritableContextProvider {
  private inner: InMemoryContextProvider | undefined;

  constructor(
    readonly store = new InMemoryStore(),
    readonly namespace = "default",
  ) {}

  init(label: string): void {
    this.inner = new InMemoryContextProvider({
      store: this.store,
      label: JSON.stringify([this.namespace, label]),
    });
  }

  get(): Promise<string | null> {
    return this.block().get();
  }

  set(content: string): Promise<void> {
    return this.block().set(content);
  }

  private block(): InMemoryContextProvider {
    this.inner ??= new InMemoryContextProvider({
      store: this.store,
      label: JSON.stringify([this.namespace, ""]),
    });
    return this.inner;
  }
}
