/** Runs one provider call somewhere else (inside a Durable Object, a transaction, a request context). */
export type CallRunner = <T>(call: () => T | Promise<T>) => Promise<T>;

/**
 * The same provider, with every method call run through `run`. The shape is unchanged (the same
 * function-valued properties), and `this` is the original object, so private fields keep working.
 *
 * Made for Durable Object providers under `@cloudflare/vitest-pool-workers`, whose storage may only be
 * touched inside the object:
 *
 * ```ts
 * const stub = env.MY_OBJECT.get(env.MY_OBJECT.idFromName(name));
 * const storage = await runInDurableObject(stub, (_object, state) => state.storage);
 * return routeProviderCalls(new MyProvider(storage), (call) => runInDurableObject(stub, call));
 * ```
 */
export function routeProviderCalls<P extends object>(provider: P, run: CallRunner): P {
  return new Proxy(provider, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        run(() => (value as (...parameters: unknown[]) => unknown).apply(target, args));
    },
  });
}
