import { ContextError } from "@contextblocks/core";

/**
 * A promise that says what went wrong when code written for agents' synchronous method reads it as the
 * value: any property other than the promise's own (`then`, `catch`, `finally`) throws a `ContextError`
 * naming the method, `why` it is async here, and the fix (`await`). So does iterating it (`for…of`,
 * `const [first] = …`, `[...hits]`), which reads `Symbol.iterator`: a promise has none, and the plain
 * `TypeError` ("is not iterable") named neither the method nor the fix.
 */
export function asyncResult<T>(promise: Promise<T>, method: string, why: string): Promise<T> {
  const misuse = (reading: string) =>
    new ContextError(
      "UNSUPPORTED",
      `${method} returns a promise in contextblocks (it is synchronous in Cloudflare agents; ${why}): write \`await ${method.split(".").at(-1)}(…)\` before ${reading}`,
    );
  return new Proxy(promise, {
    get(target, property) {
      if (property === "then" || property === "catch" || property === "finally") {
        const member = Reflect.get(target, property, target) as (...args: unknown[]) => unknown;
        return member.bind(target);
      }
      if (property === Symbol.iterator) throw misuse("iterating the results");
      if (typeof property === "symbol") return Reflect.get(target, property, target);
      throw misuse(`reading "${property}"`);
    },
  });
}
