import type { ContextProvider } from "@contextblocks/core";
import { describe } from "vitest";
import { capabilityGroup } from "./capabilities.js";
import { entryVersionsGroup } from "./entry-versions.js";
import { loadableGroup } from "./loadable.js";
import { namespacingGroup } from "./namespacing.js";
import type { ConformanceOptions, ProviderFactory } from "./options.js";
import { readableGroup } from "./readable.js";
import { searchableGroup } from "./searchable.js";
import { createSuite, type Suite } from "./suite.js";
import { throughContextGroup } from "./through-context.js";
import { versionsGroup } from "./versions.js";
import { writableGroup } from "./writable.js";

type Group = <P extends ContextProvider>(suite: Suite<P>) => void;

const ALL_GROUPS: readonly Group[] = [
  capabilityGroup,
  readableGroup,
  writableGroup,
  versionsGroup,
  searchableGroup,
  loadableGroup,
  entryVersionsGroup,
  namespacingGroup,
  throughContextGroup,
];

function describeGroups<P extends ContextProvider>(
  groups: readonly Group[],
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  const suite = createSuite(factory, options);
  describe(name, () => {
    for (const register of groups) register(suite);
  });
}

/**
 * Registers the whole conformance suite for a provider: a `describe(name)` holding every group. Groups
 * the declared capabilities rule out are listed as skipped.
 *
 * @param name Shown as the outer `describe`.
 * @param factory Returns a fresh, isolated provider on every call (sync or async).
 * @param options What the provider can do, and hooks: cleanup, reopen, namespace, seed, limits.
 */
export function describeContextProvider<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups(ALL_GROUPS, name, factory, options);
}

/** Only the capability declaration checks. */
export function describeCapabilityDeclaration<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([capabilityGroup], name, factory, options);
}

/** Only the readable group: get(), init(label), label isolation, factory isolation. */
export function describeReadable<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([readableGroup], name, factory, options);
}

/** Only the writable group: round trips, overwrite, durability, concurrent writes. */
export function describeWritable<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([writableGroup], name, factory, options);
}

/** Only the searchable group: count, keyed set, word/stem/question search, cap, rank, isolation, hostile queries. */
export function describeSearchable<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([searchableGroup], name, factory, options);
}

/** Only the loadable group: listing, load, keyed set, isolation. */
export function describeLoadable<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([loadableGroup], name, factory, options);
}

/** Only the namespacing group. */
export function describeNamespacing<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([namespacingGroup], name, factory, options);
}

/** Only the checks through ContextBlocks: marker, freeze, cold start, tools. */
export function describeThroughContextBlocks<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([throughContextGroup], name, factory, options);
}

/** Only the versions group: versions newest first, restore, retention, failed writes, restart. */
export function describeVersions<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([versionsGroup], name, factory, options);
}

/** Only the entry versions group: versions of a loadable block's entries by key, restore, retention, restart. */
export function describeEntryVersions<P extends ContextProvider>(
  name: string,
  factory: ProviderFactory<P>,
  options: ConformanceOptions<P>,
): void {
  describeGroups([entryVersionsGroup], name, factory, options);
}
