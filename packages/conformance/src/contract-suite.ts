import { afterEach, describe, it } from "vitest";

/** What the registry, run-state and backend suites are given besides the factory. */
export interface ContractSuiteOptions<T> {
  /** Releases one instance after its test. */
  cleanup?(instance: T): void | Promise<void>;
  /** Per-test timeout in milliseconds. */
  timeout?: number;
}

/**
 * One `describe` whose tests each get fresh instances from the factory, released after the test: the shape
 * shared by the registry, run-state and backend suites.
 */
export function contractSuite<T>(
  title: string,
  factory: () => T | Promise<T>,
  options: ContractSuiteOptions<T>,
  body: (
    test: (
      name: string,
      run: (create: () => Promise<T>, skip: (reason: string) => void) => Promise<void>,
    ) => void,
  ) => void,
): void {
  if (typeof factory !== "function") throw new TypeError(`conformance: ${title} needs a factory function`);
  describe(title, () => {
    const made: T[] = [];
    afterEach(async () => {
      for (const instance of made.splice(0).reverse()) await options.cleanup?.(instance);
    });
    const create = async (): Promise<T> => {
      const instance = await factory();
      if (typeof instance !== "object" || instance === null) {
        throw new TypeError(`conformance: the ${title} factory must return an object`);
      }
      made.push(instance);
      return instance;
    };
    body((name, run) =>
      it(name, (context) => run(create, (reason) => context.skip(reason)), options.timeout),
    );
  });
}

/** The error a call was refused with (its `code` and message), failing the test when it resolved. */
export async function refusedWith(run: () => unknown): Promise<{ code?: unknown; message: string }> {
  const error: unknown = await Promise.resolve()
    .then(run)
    .then(
      () => null,
      (caught: unknown) => caught,
    );
  if (error === null) throw new Error("expected the call to be refused, but it resolved");
  const { code, message } = error as { code?: unknown; message?: unknown };
  return { code, message: String(message) };
}
