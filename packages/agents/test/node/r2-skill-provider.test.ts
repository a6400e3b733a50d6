import { describe, expect, it } from "vitest";
import { R2SkillProvider } from "../../src/index.js";

/** A bucket that keeps what it is given: the `put` calls are what the test compares. */
function recordingBucket() {
  const puts: { key: string; content: string; options: unknown }[] = [];
  const bucket = {
    puts,
    async put(key: string, content: string, options: unknown) {
      puts.push({ key, content, options });
      return null;
    },
    async head() {
      return null;
    },
    async get() {
      return null;
    },
    async delete() {},
    async list() {
      return { objects: [], truncated: false, delimitedPrefixes: [] };
    },
  };
  return bucket;
}

describe("the compatibility R2SkillProvider", () => {
  it("stores each skill with the put options agents' does (no content type), unless told one", async () => {
    const bucket = recordingBucket();
    await new R2SkillProvider(bucket as never, { prefix: "skills/", keys: ["tax"] }).set(
      "hidden",
      "Hidden",
      "Still writable",
    );
    await new R2SkillProvider(bucket as never, { contentType: "text/markdown" }).set("typed", "Typed");
    expect(bucket.puts).toEqual([
      {
        key: "skills/hidden",
        content: "Hidden",
        options: { customMetadata: { description: "Still writable" } },
      },
      { key: "typed", content: "Typed", options: { httpMetadata: { contentType: "text/markdown" } } },
    ]);
    expect(() => new R2SkillProvider(bucket as never, null as never)).toThrow(/options must be an object/);
  });
});
