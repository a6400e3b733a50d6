export type {
  SkillBucket,
  SkillListing,
  SkillListOptions,
  SkillPutOptions,
  SkillPutTarget,
} from "./bucket.js";
export { DESCRIPTION_FIELD, MAX_DESCRIPTION_BYTES, MAX_OBJECT_KEY_BYTES } from "./object-key.js";
export { R2SkillProvider, type R2SkillProviderOptions } from "./r2-skill-provider.js";
export { SKILL_CONTENT_TYPE } from "./skill-object.js";
