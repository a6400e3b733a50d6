/** A provider seen through a proxy that counts calls to each of its methods. */
export interface CountedProvider<P extends object> {
  provider: P;
  /** Calls so far, by method name. */
  calls(method: string): number;
}

/**
 * Wraps `target` so every method call is counted and forwarded to the target (with the target as `this`,
 * so private fields keep working). The shape is unchanged: the same function-valued properties.
 */
export function countCalls<P extends object>(target: P): CountedProvider<P> {
  const counts = new Map<string, number>();
  const provider = new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        counts.set(property, (counts.get(property) ?? 0) + 1);
        return (value as (...parameters: unknown[]) => unknown).apply(object, args);
      };
    },
  });
  return { provider, calls: (method) => counts.get(method) ?? 0 };
}
