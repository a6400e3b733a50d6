/**
 * The part of an R2 bucket binding (`R2Bucket` in `@cloudflare/workers-types`) the provider uses, declared
 * structurally so the package needs no Workers types at run time and a real binding fits as it is.
 */
export interface SkillBucket {
  /** `size` (bytes, as R2 reports it) is read before the body: a skill over `maxSkillBytes` is never read. */
  get(key: string): Promise<{ size?: number; text(): Promise<string> } | null>;
  head(key: string): Promise<{ customMetadata?: Record<string, string> | undefined } | null>;
  put(key: string, value: string, options?: SkillPutOptions): Promise<unknown>;
  delete(key: string): Promise<void>;
  list(options?: SkillListOptions): Promise<SkillListing>;
}

/** What `put` receives for one skill: the description as custom metadata, and a text content type. */
export interface SkillPutOptions {
  customMetadata?: Record<string, string>;
  httpMetadata?: { contentType?: string };
}

export interface SkillListOptions {
  prefix?: string;
  limit?: number;
  cursor?: string;
  include?: ("customMetadata" | "httpMetadata")[];
}

/** One page of a listing; `cursor` continues it while `truncated` is true. */
export interface SkillListing {
  objects: { key: string; customMetadata?: Record<string, string> | undefined }[];
  truncated: boolean;
  cursor?: string;
}

/** Anything skills can be uploaded to: an R2 binding, a local bucket from wrangler, a test double of `put`. */
export interface SkillPutTarget {
  put(key: string, value: string, options?: SkillPutOptions): Promise<unknown>;
}
