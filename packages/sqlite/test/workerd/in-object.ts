import { env, runInDurableObject } from "cloudflare:test";
import type { WritableContextProvider } from "@contextblocks/core";
import type { SqliteContextProvider } from "../../src/index.js";
import type { SqliteContextProviderOptions } from "../../src/store-kit.js";
import type { ContextTestObject } from "./worker.js";

/** Run `callback` inside the named Durable Object, with its state (and so its SQLite storage). */
export function inObject<R>(
  name: string,
  callback: (state: DurableObjectState, instance: ContextTestObject) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(env.CONTEXT_OBJECT.getByName(name), (instance, state) =>
    callback(state, instance),
  );
}

/**
 * A provider whose every call runs inside the named Durable Object, on a `SqliteContextProvider` that lives
 * there (built on that object's `ctx.storage`). `reopen()` gives a new provider on the same storage.
 */
export interface ProviderInObject extends WritableContextProvider {
  init(label: string): Promise<void>;
  reopen(): ProviderInObject;
  readonly objectName: string;
}

export function providerInObject(
  objectName: string,
  options: SqliteContextProviderOptions = {},
): ProviderInObject {
  const id = crypto.randomUUID();
  const inside = <R>(call: (provider: SqliteContextProvider) => R | Promise<R>): Promise<R> =>
    inObject(objectName, (_state, instance) => call(instance.provider(id, options)));
  let label = options.label;
  return {
    objectName,
    init: async (given) => {
      label ??= given;
      await inside((provider) => provider.init(given));
    },
    get: () => inside((provider) => provider.get()),
    set: (content) => inside((provider) => provider.set(content)),
    reopen: () => providerInObject(objectName, { ...options, label }),
  };
}
