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
  /** An argument is missing or of the wrong type. */
  | "INVALID_INPUT"
  /** The provider failed; `cause` holds its error. */
  | "PROVIDER_FAILED";

/** The one error class of contextblocks. Branch on `code`, not on the message. */
export class ContextError extends Error {
  override readonly name = "ContextError";
  readonly code: ContextErrorCode;
  /** The block the error is about, when there is one. */
  readonly label: string | undefined;

  constructor(code: ContextErrorCode, message: string, options?: { label?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.label = options?.label;
  }
}

export function isContextError(error: unknown): error is ContextError {
  return error instanceof ContextError;
}
