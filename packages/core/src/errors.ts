/** Stable error codes. Messages may improve; codes do not change. */
export type ContextErrorCode =
  /** Construction or `addBlock`: a label that is empty, repeated or malformed, or another bad config. */
  | "INVALID_CONFIG"
  /** No block has this label. */
  | "NOT_FOUND"
  /** The block's provider has no write method. */
  | "READONLY"
  /** The write would take the block over its `maxTokens`. */
  | "MAX_TOKENS"
  /** A whole-block write to a keyed (searchable or loadable) block, or a keyed write to a plain block. */
  | "KEYED_BLOCK"
  /** The block cannot do what was asked (search a non-searchable block, load from a non-loadable one). */
  | "UNSUPPORTED"
  /** An argument is missing, of the wrong type, too long, or not well-formed text. */
  | "INVALID_INPUT"
  /** A block's provider failed; `cause` holds its error. */
  | "PROVIDER_FAILED"
  /** A pipeline plugin (`@contextblocks/ai`) failed; `cause` holds its error. */
  | "PLUGIN_FAILED"
  /** The provider did not answer within `providerTimeoutMs`. */
  | "PROVIDER_TIMEOUT"
  /** An edit's `old_str` does not occur in the block's current text. */
  | "NO_MATCH"
  /** An edit's `old_str` occurs more than once; the message says how many times. */
  | "MULTIPLE_MATCHES"
  /** The block kept changing under a conditional write (other writers); nothing was written. */
  | "CONFLICT";

/**
 * Marks contextblocks errors. A registered symbol is the same in every copy of this package, so
 * `isContextError` recognises an error thrown by another install (two versions in one bundle).
 */
const BRAND = Symbol.for("contextblocks.error");

/** The one error class of contextblocks. Branch on `code`, not on the message. */
export class ContextError extends Error {
  override readonly name = "ContextError";
  readonly code: ContextErrorCode;
  /** The block the error is about, when there is one. */
  readonly label: string | undefined;
  declare readonly [BRAND]: true;

  constructor(code: ContextErrorCode, message: string, options?: { label?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.label = options?.label;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a `ContextError` from any copy of this package (checked by brand, not by class). */
export function isContextError(error: unknown): error is ContextError {
  return typeof error === "object" && error !== null && (error as { [BRAND]?: unknown })[BRAND] === true;
}
