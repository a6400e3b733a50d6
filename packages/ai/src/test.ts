/** Test helpers: compare the cached prefix of two requests (`@contextblocks/ai/test`). */
export {
  assertStablePrefix,
  type ComparePrefixOptions,
  comparePrefix,
  describePrefixComparison,
  type PrefixComparison,
  type PrefixSnapshot,
  type PrefixSource,
  prefixSnapshot,
} from "./prefix.js";
