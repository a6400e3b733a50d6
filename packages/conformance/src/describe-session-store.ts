import { MessageTree, type SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import { describe } from "vitest";
import { sessionConcurrencyGroup } from "./session-concurrency.js";
import { sessionContentGroup } from "./session-content.js";
import { sessionHostileGroup } from "./session-hostile.js";
import { sessionIsolationGroup } from "./session-isolation.js";
import { sessionNodesGroup } from "./session-nodes.js";
import type {
  SessionConformanceOptions,
  SessionStoreFactory,
  SessionStoreUnderTest,
} from "./session-options.js";
import { sessionOverlaysGroup } from "./session-overlays.js";
import { sessionPathReadsGroup } from "./session-path-reads.js";
import { sessionSearchGroup } from "./session-search.js";
import { type SessionStorageOptions, sessionStorageGroup } from "./session-storage.js";
import { sessionStoredIdsGroup } from "./session-stored-ids.js";
import type { SessionSuite } from "./session-suite.js";
import { sessionTreeGroup } from "./session-tree.js";

type SessionGroup = <P extends SessionStoreUnderTest>(suite: SessionSuite<P>) => void;

const ALL_SESSION_GROUPS: readonly SessionGroup[] = [
  sessionTreeGroup,
  sessionNodesGroup,
  sessionOverlaysGroup,
  sessionPathReadsGroup,
  sessionIsolationGroup,
  sessionConcurrencyGroup,
  sessionContentGroup,
  sessionHostileGroup,
  sessionStoredIdsGroup,
  sessionSearchGroup,
];

/** Both suites' entry checks: a factory, and options with a `capabilities` object. */
function checkSuiteArguments(factory: unknown, options: { capabilities?: unknown } | null | undefined): void {
  if (typeof factory !== "function") {
    throw new TypeError(
      "conformance: the second argument must be a factory function returning a session store",
    );
  }
  if (typeof options !== "object" || options === null || typeof options.capabilities !== "object") {
    throw new TypeError("conformance: the third argument must be options with a `capabilities` object");
  }
}

function describeSessionGroups<P extends SessionStoreUnderTest>(
  groups: readonly SessionGroup[],
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  checkSuiteArguments(factory, options);
  const suite: SessionSuite<P> = { factory, options };
  describe(name, () => {
    for (const register of groups) register(suite);
  });
}

/**
 * Registers the session storage suite: the message tree and branches, parent links (`getNode`, `getTree`,
 * when `capabilities.tree` is declared), overlays, isolation between
 * sessions, durability across `reopen`, concurrent appends, exact content (hostile and large parts), what an
 * append does with a stored id and, when declared, search. Groups without the options they need are listed as skipped.
 */
export function describeSessionStore<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups(ALL_SESSION_GROUPS, name, factory, options);
}

/** Only the tree group: appends, paths, branches, updates, deletes, refusals. */
export function describeSessionTree<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionTreeGroup], name, factory, options);
}

/**
 * Only the stored-ids groups: an identical retry succeeds without a second row; any other append of an id
 * stored in this session or (with the `session` option) another is refused with `INVALID_INPUT`.
 */
export function describeSessionStoredIds<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionStoredIdsGroup], name, factory, options);
}

/** Only the overlays group. */
export function describeSessionOverlays<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionOverlaysGroup], name, factory, options);
}

/** Only the isolation and durability groups. */
export function describeSessionIsolation<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionIsolationGroup], name, factory, options);
}

/** Only the content group: round trips of awkward, tool and large parts. */
export function describeSessionContent<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionContentGroup], name, factory, options);
}

/**
 * Only the path-reads group: parent links that give the path, a replay of appends that reproduces the tree
 * (what mirroring a change feed does), and `getPathNodes`, `getMessages`, `importMessage` when present.
 */
export function describeSessionPathReads<P extends SessionStoreUnderTest>(
  name: string,
  factory: SessionStoreFactory<P>,
  options: SessionConformanceOptions<P>,
): void {
  describeSessionGroups([sessionPathReadsGroup], name, factory, options);
}

/**
 * Registers the whole suite for a store on the storage contract `SessionStoreV1`: the contract itself
 * (records, paths, the atomic append and its conflicts, two writers, declared optional members), then every
 * group of `describeSessionStore` through the message tree of `@contextblocks/sessions`, as a `Session`
 * reads the store. An optional member the store does not declare is listed as skipped with its reason.
 */
export function describeSessionStoreV1<S extends SessionStoreV1>(
  name: string,
  factory: () => S | Promise<S>,
  options: SessionStorageOptions<S>,
): void {
  checkSuiteArguments(factory, options);
  const storageOf = (tree: MessageTree) => tree.storage as S;
  const treeOptions: SessionConformanceOptions<MessageTree> = {
    capabilities: { search: options.capabilities.search === true, tree: true },
    cleanup: async (tree) => options.cleanup?.(storageOf(tree)),
  };
  const { session, reopen } = options;
  if (session)
    treeOptions.session = async (tree, sessionId) =>
      new MessageTree(await session(storageOf(tree), sessionId));
  if (reopen) treeOptions.reopen = async (tree) => new MessageTree(await reopen(storageOf(tree)));
  if (options.timeout !== undefined) treeOptions.timeout = options.timeout;
  if (options.largePartSize !== undefined) treeOptions.largePartSize = options.largePartSize;
  describe(name, () => {
    sessionStorageGroup(factory, options);
    for (const register of ALL_SESSION_GROUPS) {
      register({ factory: async () => new MessageTree(await factory()), options: treeOptions });
    }
  });
}
