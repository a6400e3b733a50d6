import {
  R2SkillProvider as ContextblocksR2SkillProvider,
  type R2SkillProviderOptions,
  type SkillBucket,
} from "@contextblocks/r2";

/**
 * Cloudflare agents' `R2SkillProvider`: `@contextblocks/r2`'s, storing each object with the `put` options
 * agents' stores (its description as custom metadata, no content type), so a bucket reads the same to
 * whatever else lists it. `contentType` still sets one.
 */
export class R2SkillProvider extends ContextblocksR2SkillProvider {
  constructor(bucket: SkillBucket, options: R2SkillProviderOptions = {}) {
    // Options that are not an object are the parent's to refuse, by name.
    super(
      bucket,
      typeof options === "object" && options !== null ? { contentType: null, ...options } : options,
    );
  }
}
