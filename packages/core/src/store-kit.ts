/**
 * `@contextblocks/core/store-kit`: helpers for authors of providers, backends and adapters (our SQLite,
 * Postgres and R2 backends, the AI SDK adapter, otel and the inspector import them). Applications import
 * the main entry; nothing here is needed to use the packages.
 */

export { BlockQueue } from "./block-queue.js";
export {
  hasMethod,
  isConditionalProvider,
  isSearchProvider,
  isSkillProvider,
  isVersionedProvider,
  isVersionedSkillProvider,
  isWritableProvider,
} from "./capabilities.js";
export { clipped, describeValue, errorMessage } from "./describe-value.js";
export { entryId, type LoadedEntry } from "./entries.js";
export { labelOfHeader, SECTION_RULE } from "./prompt-format.js";
export { neutralizeContent } from "./render.js";
export {
  checkNamespace,
  checkRowLabel,
  checkStoredLabel,
  type LabelCheckOptions,
  loneSurrogateProblem,
  NAMESPACE_MARK,
  namespacePrefix,
  rowLabel,
  type UnstorableText,
} from "./row-label.js";
export type { EditContextInput } from "./tools/edit-context.js";
export type { EntryInput } from "./tools/load-context.js";
export type { SearchContextInput } from "./tools/search-context.js";
export type { SetContextInput } from "./tools/set-context.js";
export type { ContextToolName } from "./tools/spec.js";
export { GEN_AI, getContextTracer, sha256Hex, traced } from "./tracing.js";
export type {
  AnyContextProvider,
  FingerprintedPrompt,
  FingerprintingPromptStore,
  SyncReadableProvider,
  WriteSource,
} from "./types.js";
export { isWellFormed, loneSurrogateIndex, wellFormedPrefix } from "./well-formed.js";
