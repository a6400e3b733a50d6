import { ContextError } from "@contextblocks/core";
import { describeValue, isWellFormed, loneSurrogateIndex } from "@contextblocks/core/store-kit";

/** R2's limit on an object name, in UTF-8 bytes. */
export const MAX_OBJECT_KEY_BYTES = 1_024;

/** Our cap on a description, in UTF-8 bytes: R2 allows 8,192 bytes of metadata per object in all. */
export const MAX_DESCRIPTION_BYTES = 4_096;

/** The metadata field holding a skill's description (the one `agents`' R2SkillProvider reads). */
export const DESCRIPTION_FIELD = "description";

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const encoder = new TextEncoder();

/** True when `text` holds a UTF-16 surrogate without its pair: UTF-8 (R2) cannot store it unchanged. */
export function hasLoneSurrogate(text: string): boolean {
  return !isWellFormed(text);
}

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Why `key` (relative to `prefix`) is not a usable skill name, or `null` when it is: object names are
 * non-empty UTF-8 of at most 1,024 bytes with the prefix, and a skill key is one line of the listing.
 */
export function keyProblem(key: unknown, prefix: string): string | null {
  if (typeof key !== "string") return `a skill key must be a string, got ${describeValue(key)}`;
  if (key.length === 0) return "a skill key must not be empty";
  const control = CONTROL_CHARACTER.exec(key);
  if (control !== null)
    return `the skill key ${JSON.stringify(key)} has a control character or line break at index ${control.index}; keys are listed one per line`;
  const lone = loneSurrogateIndex(key);
  if (lone !== -1)
    return `the skill key has a lone UTF-16 surrogate at index ${lone}, which is not a valid object name (R2 names are UTF-8)`;
  const bytes = utf8Length(prefix) + utf8Length(key);
  if (bytes > MAX_OBJECT_KEY_BYTES)
    return `the object name for skill key ${JSON.stringify(key.slice(0, 40))}… is ${bytes} bytes with the prefix; R2 allows ${MAX_OBJECT_KEY_BYTES}`;
  return null;
}

/** Checks a skill key; throws an `INVALID_INPUT` `ContextError` naming the problem. */
export function checkKey(key: unknown, prefix: string, where: string): asserts key is string {
  const problem = keyProblem(key, prefix);
  if (problem !== null) throw new ContextError("INVALID_INPUT", `${where}: ${problem}`);
}

/** Checks the prefix option: text R2 can store, within the object name limit. */
export function checkPrefix(prefix: unknown): string {
  if (prefix === undefined) return "";
  if (typeof prefix !== "string") {
    throw new ContextError(
      "INVALID_CONFIG",
      `R2SkillProvider: prefix must be a string, got ${describeValue(prefix)}`,
    );
  }
  const problem = CONTROL_CHARACTER.test(prefix)
    ? "has a control character or line break"
    : hasLoneSurrogate(prefix)
      ? "has a lone UTF-16 surrogate"
      : utf8Length(prefix) >= MAX_OBJECT_KEY_BYTES
        ? `leaves no room in R2's ${MAX_OBJECT_KEY_BYTES}-byte object names`
        : null;
  if (problem !== null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `R2SkillProvider: the prefix ${JSON.stringify(prefix)} ${problem}`,
    );
  }
  return prefix;
}

/** Checks a description: one line of text R2 metadata can hold. `undefined` passes (none given). */
export function checkDescription(description: unknown, key: string, where: string): string | undefined {
  if (description === undefined) return undefined;
  if (typeof description !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `${where}: the description of skill "${key}" must be a string or omitted, got ${describeValue(description)}`,
    );
  }
  const control = CONTROL_CHARACTER.exec(description);
  const lone = loneSurrogateIndex(description);
  const bytes = utf8Length(description);
  const problem =
    control !== null
      ? `has a control character or line break at index ${control.index}; it must be one line`
      : lone !== -1
        ? `has a lone UTF-16 surrogate at index ${lone}, which R2 metadata cannot store unchanged`
        : bytes > MAX_DESCRIPTION_BYTES
          ? `is ${bytes} bytes; the most is ${MAX_DESCRIPTION_BYTES}`
          : null;
  if (problem !== null) {
    throw new ContextError("INVALID_INPUT", `${where}: the description of skill "${key}" ${problem}`);
  }
  return description;
}

/** Checks a skill's content: a string R2 stores byte for byte (no lone surrogates). */
export function checkContent(content: unknown, key: string, where: string): asserts content is string {
  if (typeof content !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `${where}: the content of skill "${key}" must be a string, got ${describeValue(content)}`,
    );
  }
  const lone = loneSurrogateIndex(content);
  if (lone !== -1) {
    throw new ContextError(
      "INVALID_INPUT",
      `${where}: the content of skill "${key}" has a lone UTF-16 surrogate at index ${lone}, which R2 (UTF-8) cannot store unchanged`,
    );
  }
}

/** A listed description on one line, whatever another tool stored in the metadata. */
export function oneLine(description: string): string {
  return description.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
}
