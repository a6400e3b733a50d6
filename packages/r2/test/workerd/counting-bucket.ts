/** Calls made on a real bucket binding, by method. */
export type CallCounts = Record<"get" | "head" | "put" | "delete" | "list", number>;

/**
 * The real R2 binding with its calls counted (every call goes through to the bucket unchanged): how the
 * tests prove a listing paginates and a refused load fetches nothing.
 */
export function countingBucket(bucket: R2Bucket): { bucket: R2Bucket; calls: CallCounts } {
  const calls: CallCounts = { get: 0, head: 0, put: 0, delete: 0, list: 0 };
  const counted = new Proxy(bucket, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (typeof property === "string" && property in calls) calls[property as keyof CallCounts] += 1;
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { bucket: counted, calls };
}
