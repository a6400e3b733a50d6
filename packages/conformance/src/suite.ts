import type { BlockKind, ContextProvider } from "@contextblocks/core";
import { afterEach, describe, it, type TestContext } from "vitest";
import { ProviderFixture } from "./fixture.js";
import {
  type ConformanceOptions,
  DEFAULT_CONCURRENT_WRITES,
  type DeclaredCapabilities,
  declaredCapabilities,
  type ProviderFactory,
  wholeNumberOption,
} from "./options.js";
import { concurrencySchedules, DEFAULT_CONCURRENCY_ROUNDS, type Schedule } from "./scheduling.js";

/** What every group is given: the provider under test and what it declares. */
export interface Suite<P extends ContextProvider> {
  factory: ProviderFactory<P>;
  options: ConformanceOptions<P>;
  declared: DeclaredCapabilities;
  /** The block kind the declaration gives, in core's marker precedence. */
  kind: BlockKind;
  /** How many writes each concurrency round starts (`concurrentWrites`, checked). */
  writers: number;
  /** The schedules of the concurrency rounds (`concurrencyRounds`, checked). */
  schedules: Schedule[];
}

export function createSuite<P extends ContextProvider>(
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): Suite<P> {
  if (typeof factory !== "function") {
    throw new TypeError("conformance: the second argument must be a factory function returning a provider");
  }
  if (typeof options !== "object" || options === null || typeof options.capabilities !== "object") {
    throw new TypeError("conformance: the third argument must be options with a `capabilities` object");
  }
  const declared = declaredCapabilities(options.capabilities);
  if (options.versionRetention !== undefined) {
    wholeNumberOption("versionRetention", options.versionRetention, 1, 1);
  }
  const writers = wholeNumberOption(
    "concurrentWrites",
    options.concurrentWrites,
    2,
    DEFAULT_CONCURRENT_WRITES,
  );
  const rounds = wholeNumberOption(
    "concurrencyRounds",
    options.concurrencyRounds,
    1,
    DEFAULT_CONCURRENCY_ROUNDS,
  );
  return {
    factory,
    options,
    declared,
    kind: declaredKind(declared),
    writers,
    schedules: concurrencySchedules(rounds),
  };
}

/** searchable > loadable > writable > readonly, as `blockKindOf` in core decides from the shape. */
export function declaredKind(declared: DeclaredCapabilities): BlockKind {
  if (declared.searchable) return "searchable";
  if (declared.loadable) return "loadable";
  if (declared.writable) return "writable";
  return "readonly";
}

/**
 * Registers one group: a `describe` whose tests share a fixture released after each test, or a
 * `describe.skip` (its tests listed as skipped) when the provider does not support it.
 */
export function group<P extends ContextProvider>(
  title: string,
  suite: Suite<P>,
  enabled: boolean,
  body: (fixture: ProviderFixture<P>) => void,
): void {
  (enabled ? describe : describe.skip)(title, () => {
    const fixture = new ProviderFixture(suite.factory, suite.options);
    afterEach(() => fixture.release());
    body(fixture);
  });
}

/**
 * Registers one test. `missing` names what the test needs and the provider lacks (for example
 * "needs reopen"); such a test is listed as skipped with that reason in its title.
 */
export function check<P extends ContextProvider>(
  suite: Suite<P>,
  title: string,
  missing: string | null,
  body: (test: TestContext) => Promise<void>,
): void {
  if (missing !== null) it.skip(`${title} (${missing})`, body);
  else it(title, body, suite.options.timeout);
}

/** Without a `timeout` option, a repeated concurrency check may take this long (its rounds add up). */
export const CONCURRENCY_CHECK_TIMEOUT = 60_000;

/** A check that repeats its body once per concurrency round: the default timeout allows for the rounds. */
export function concurrencyCheck<P extends ContextProvider>(
  suite: Suite<P>,
  title: string,
  missing: string | null,
  body: (test: TestContext) => Promise<void>,
): void {
  if (missing !== null) it.skip(`${title} (${missing})`, body);
  else it(title, body, suite.options.timeout ?? CONCURRENCY_CHECK_TIMEOUT);
}

/** The reason a test that needs `reopen` is skipped, or `null` when the option is there. */
export function needsReopen<P extends ContextProvider>(suite: Suite<P>): string | null {
  return suite.options.reopen ? null : "needs the reopen option";
}

/** Combines requirements: the first reason that applies, or `null`. */
export function firstMissing(...reasons: (string | null)[]): string | null {
  return reasons.find((reason) => reason !== null) ?? null;
}
