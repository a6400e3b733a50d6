/** Where the skills live in the bucket: `skills/<key>`, as `pnpm seed-skills` uploads them. */
export const SKILLS_PREFIX = "skills/";

/** The SKILLS_BUCKET binding's bucket name in wrangler.jsonc (the seed script writes to its local copy). */
export const SKILLS_BUCKET_NAME = "contextblocks-worker-agent-skills";
