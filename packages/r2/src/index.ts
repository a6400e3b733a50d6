export type { SkillBucket } from "./bucket.js";
export { R2SkillProvider, type R2SkillProviderOptions } from "./r2-skill-provider.js";
