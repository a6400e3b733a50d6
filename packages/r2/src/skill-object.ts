import type { SkillPutOptions } from "./bucket.js";
import { DESCRIPTION_FIELD } from "./object-key.js";

/** Skills are Markdown; the content type lets the objects open as text in the dashboard and over HTTP. */
export const SKILL_CONTENT_TYPE = "text/markdown; charset=utf-8";

/**
 * The `put` options of one skill object: its content type (none when `null`) and its description (if any) as
 * custom metadata.
 */
export function skillPutOptions(
  description: string | undefined,
  contentType: string | null = SKILL_CONTENT_TYPE,
): SkillPutOptions {
  return {
    ...(contentType === null ? {} : { httpMetadata: { contentType } }),
    ...(description === undefined || description === ""
      ? {}
      : { customMetadata: { [DESCRIPTION_FIELD]: description } }),
  };
}
