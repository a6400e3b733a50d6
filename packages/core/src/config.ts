import { blockKindOf, isReadableProvider } from "./capabilities.js";
import { ContextError } from "./errors.js";
import type { AnyContextProvider, BlockKind, ContextConfig, WhenChanged } from "./types.js";

/** A block config after validation and default-provider wiring. */
export interface ResolvedConfig {
  readonly label: string;
  readonly description?: string;
  readonly maxTokens?: number;
  readonly provider?: AnyContextProvider;
  readonly whenChanged: WhenChanged;
  readonly kind: BlockKind;
}

const LINE_BREAK = /[\n\r\u2028\u2029]/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks one config and fills in its provider; throws `INVALID_CONFIG` naming the problem. */
export function resolveConfig(
  config: ContextConfig,
  defaultProvider: ((label: string) => AnyContextProvider) | undefined,
): ResolvedConfig {
  if (typeof config !== "object" || config === null) {
    throw new ContextError("INVALID_CONFIG", `A block config must be an object, got ${describe(config)}`);
  }
  const { label, description, maxTokens, whenChanged } = config;
  if (typeof label !== "string" || label.trim().length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `A block label must be a non-empty string, got ${describe(label)}`,
    );
  }
  if (label !== label.trim() || CONTROL.test(label) || LINE_BREAK.test(label) || label.includes("═")) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block label ${JSON.stringify(label)} must not have surrounding spaces, control characters, line breaks or "═"`,
      { label },
    );
  }
  if (description !== undefined && (typeof description !== "string" || LINE_BREAK.test(description))) {
    throw new ContextError("INVALID_CONFIG", `Block "${label}": description must be a single-line string`, {
      label,
    });
  }
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens <= 0)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}": maxTokens must be a positive integer, got ${describe(maxTokens)}`,
      { label },
    );
  }
  if (whenChanged !== undefined && whenChanged !== "wait" && whenChanged !== "remind") {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}": whenChanged must be "wait" or "remind", got ${describe(whenChanged)}`,
      { label },
    );
  }
  const provider = config.provider ?? defaultProvider?.(label);
  if (provider !== undefined && !isReadableProvider(provider)) {
    throw new ContextError("INVALID_CONFIG", `Block "${label}": its provider has no get() method`, { label });
  }
  return {
    label,
    ...(description ? { description } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(provider !== undefined ? { provider } : {}),
    whenChanged: whenChanged ?? "wait",
    kind: blockKindOf(provider),
  };
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}
