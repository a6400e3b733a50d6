declare namespace Cloudflare {
  interface Env {
    SKILLS_BUCKET: R2Bucket;
  }
}
