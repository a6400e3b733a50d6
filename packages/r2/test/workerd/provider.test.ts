import { env } from "cloudflare:test";
import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { R2SkillProvider } from "../../src/index.js";
import { countingBucket } from "./counting-bucket.js";

let folders = 0;
/** A fresh prefix of the test bucket for each test. */
const freshPrefix = () => `provider-${++folders}/skills/`;

async function refusal(attempt: () => unknown): Promise<{ code: unknown; message: string }> {
  try {
    await attempt();
  } catch (error) {
    return { code: isContextError(error) ? error.code : "not a ContextError", message: String(error) };
  }
  throw new Error("expected a refusal");
}

describe("R2SkillProvider on a local R2 bucket", () => {
  it("stores one object per skill under the prefix, the description in custom metadata", async () => {
    const prefix = freshPrefix();
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
    await skills.set("code-review", "# Review\nRead the diff.", "Reviewing a pull request");
    const object = await env.SKILLS_BUCKET.get(`${prefix}code-review`);
    expect(await object?.text()).toBe("# Review\nRead the diff.");
    expect(object?.customMetadata).toEqual({ description: "Reviewing a pull request" });
    expect(object?.httpMetadata?.contentType).toBe("text/markdown; charset=utf-8");
    expect(await skills.get()).toBe("- code-review: Reviewing a pull request");
    expect(await skills.load("code-review")).toBe("# Review\nRead the diff.");
  });

  it("stores another content type, or none with contentType: null (as agents' R2SkillProvider), and refuses an empty one", async () => {
    const prefix = freshPrefix();
    await new R2SkillProvider(env.SKILLS_BUCKET, { prefix, contentType: null }).set(
      "plain",
      "# Plain",
      "Plain",
    );
    const plain = await env.SKILLS_BUCKET.head(`${prefix}plain`);
    expect(plain?.httpMetadata?.contentType).toBeUndefined();
    expect(plain?.customMetadata).toEqual({ description: "Plain" });
    await new R2SkillProvider(env.SKILLS_BUCKET, { prefix, contentType: "text/plain" }).set("text", "x");
    expect((await env.SKILLS_BUCKET.head(`${prefix}text`))?.httpMetadata?.contentType).toBe("text/plain");
    for (const bad of ["", " ", 42]) {
      expect(
        (await refusal(() => new R2SkillProvider(env.SKILLS_BUCKET, { contentType: bad as string }))).code,
      ).toBe("INVALID_CONFIG");
    }
  });

  it("refuses a contentType that is not a header value: writeHttpMetadata served a stored line break as a header of its own", async () => {
    const prefix = freshPrefix();
    const refusals = [
      ["text/plain\r\nX-Injected: 1", 'got "text/plain\\r\\nX-Injected: 1": U+000D at index 10'],
      ["text/plain\n", "U+000A at index 10"],
      ["a\u0000b", "U+0000 at index 1"],
      ["text/\uD800", "U+D800 at index 5"],
      ["текст/plain", "U+0442 at index 0"],
      [" text/plain", "U+0020 at index 0"],
      ["x".repeat(1025), "contentType is 1025 characters; the limit is 1024"],
    ];
    for (const [contentType, problem] of refusals) {
      const { code, message } = await refusal(
        () => new R2SkillProvider(env.SKILLS_BUCKET, { prefix, contentType }),
      );
      expect(code, contentType).toBe("INVALID_CONFIG");
      expect(message, contentType).toContain(problem);
    }
    // Nothing was stored; a type with parameters is taken.
    expect((await env.SKILLS_BUCKET.list({ prefix })).objects).toEqual([]);
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, {
      prefix,
      contentType: 'text/x-skill; charset="utf-8"',
    });
    await skills.set("k", "# K");
    const stored = await env.SKILLS_BUCKET.get(`${prefix}k`);
    const headers = new Headers();
    stored?.writeHttpMetadata(headers);
    expect([...headers]).toEqual([["content-type", 'text/x-skill; charset="utf-8"']]);
  });

  it("reads skills other tools uploaded the way agents' R2SkillProvider does, and lists nothing outside the prefix", async () => {
    const prefix = freshPrefix();
    await env.SKILLS_BUCKET.put(`${prefix}debugging`, "Bisect.", {
      customMetadata: { description: "Debugging" },
    });
    await env.SKILLS_BUCKET.put(`${prefix}plain`, "No metadata.");
    await env.SKILLS_BUCKET.put(`${prefix}folded`, "x", { customMetadata: { description: "two\nlines" } });
    await env.SKILLS_BUCKET.put(`${prefix}bad\nkey`, "x", { customMetadata: { description: "forged line" } });
    await env.SKILLS_BUCKET.put(`${prefix.slice(0, -1)}-other/outside`, "x");
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
    expect(await skills.get()).toBe("- debugging: Debugging\n- folded: two lines\n- plain");
    expect(await skills.load("debugging")).toBe("Bisect.");
    expect(await skills.load("missing")).toBeNull();
  });

  it("lists more than 1,000 skills in name order, following the cursor page by page", async () => {
    const prefix = freshPrefix();
    const count = 1_050;
    const keys = Array.from({ length: count }, (_, index) => `skill-${String(index).padStart(4, "0")}`);
    for (let start = 0; start < count; start += 50) {
      await Promise.all(
        keys.slice(start, start + 50).map((key) =>
          env.SKILLS_BUCKET.put(prefix + key, `Body of ${key}`, {
            customMetadata: { description: `About ${key}` },
          }),
        ),
      );
    }
    const { bucket, calls } = countingBucket(env.SKILLS_BUCKET);
    const listing = (await new R2SkillProvider(bucket, { prefix }).get()) ?? "";
    expect(listing.split("\n")).toEqual(keys.map((key) => `- ${key}: About ${key}`));
    expect(calls.list, "more than one page").toBeGreaterThanOrEqual(2);
    expect(calls.get, "no object is read to list").toBe(0);
  }, 120_000);

  it("filters the listing by keys, and answers other loads with null without fetching", async () => {
    const prefix = freshPrefix();
    const writer = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
    for (const key of ["code-review", "debugging", "secrets"])
      await writer.set(key, `Body ${key}`, `About ${key}`);
    const { bucket, calls } = countingBucket(env.SKILLS_BUCKET);
    const allowed = new R2SkillProvider(bucket, { prefix, keys: ["code-review", "debugging"] });
    expect(await allowed.get()).toBe("- code-review: About code-review\n- debugging: About debugging");
    expect(await allowed.load("secrets")).toBeNull();
    expect(calls.get, "a refused load fetches nothing").toBe(0);
    expect(await allowed.load("debugging")).toBe("Body debugging");
    expect(calls.get).toBe(1);
    // As agents' R2SkillProvider: keys filter reads, not writes; the written key stays unlisted.
    await allowed.set("secrets", "overwritten", "Still writable");
    expect(await writer.load("secrets")).toBe("overwritten");
    expect(await allowed.get()).toBe("- code-review: About code-review\n- debugging: About debugging");
    await allowed.delete("secrets");
    expect(await writer.load("secrets")).toBeNull();
    expect(
      new R2SkillProvider(env.SKILLS_BUCKET, { prefix, keys: [] }).keys,
      "an empty list filters nothing",
    ).toBeNull();
  });

  it("keeps the stored description when set omits it, and removes it with an empty one", async () => {
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix: freshPrefix() });
    await skills.set("deploy", "v1", "Deploying");
    await skills.set("deploy", "v2");
    expect(await skills.get()).toBe("- deploy: Deploying");
    expect(await skills.load("deploy")).toBe("v2");
    await skills.set("deploy", "v3", "");
    expect(await skills.get()).toBe("- deploy");
    await skills.delete("deploy");
    expect(await skills.get()).toBeNull();
  });

  it("refuses to load an object over maxSkillBytes (another tool uploaded it) by its size, without reading it", async () => {
    const prefix = freshPrefix();
    await env.SKILLS_BUCKET.put(`${prefix}huge`, "x".repeat(1_048_577));
    await env.SKILLS_BUCKET.put(`${prefix}largest`, "y".repeat(1_048_576));
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
    const { code, message } = await refusal(() => skills.load("huge"));
    expect(code).toBe("PROVIDER_FAILED");
    expect(message).toContain(
      'R2SkillProvider.load: skill "huge" is 1,048,577 bytes; the most a load reads is 1,048,576 (maxSkillBytes)',
    );
    expect((await skills.load("largest"))?.length).toBe(1_048_576);
    expect(await skills.get()).toBe("- huge\n- largest");
    const roomier = new R2SkillProvider(env.SKILLS_BUCKET, { prefix, maxSkillBytes: 2_000_000 });
    expect((await roomier.load("huge"))?.length).toBe(1_048_577);
    for (const bad of [0, -1, 1.5, Number.NaN, "1" as unknown as number]) {
      expect(() => new R2SkillProvider(env.SKILLS_BUCKET, { maxSkillBytes: bad })).toThrow(
        /maxSkillBytes must be a positive whole number of bytes/,
      );
    }
  });

  it("refuses keys that are not valid object names, and bad content or descriptions, keeping what is stored", async () => {
    const prefix = freshPrefix();
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix });
    await skills.set("deploy", "safe", "Deploying");
    const cases: [() => unknown, RegExp][] = [
      [() => skills.set("", "x"), /R2SkillProvider.set: a skill key must not be empty/],
      [() => skills.set("a\nb", "x"), /skill key "a\\nb" has a control character or line break at index 1/],
      [() => skills.load("a\u0000b"), /R2SkillProvider.load: .*control character/],
      [
        () => skills.set("deploy\ud800", "x"),
        /lone UTF-16 surrogate at index 6, which is not a valid object name/,
      ],
      [() => skills.set("k".repeat(1_024), "x"), /is \d{4} bytes with the prefix; R2 allows 1024/],
      [() => skills.delete(42 as unknown as string), /a skill key must be a string, got number 42/],
      [
        () => skills.set("deploy", "broken \udfff"),
        /content of skill "deploy" has a lone UTF-16 surrogate at index 7/,
      ],
      [
        () => skills.set("deploy", "x", "line\nbreak"),
        /description of skill "deploy" has a control character or line break/,
      ],
      [
        () => skills.set("deploy", "x", "é".repeat(2_049)),
        /description of skill "deploy" is 4098 bytes; the most is 4096/,
      ],
      [
        () => skills.set("deploy", null as unknown as string),
        /content of skill "deploy" must be a string, got null/,
      ],
    ];
    for (const [attempt, message] of cases) {
      const { code, message: text } = await refusal(attempt);
      expect(code, String(message)).toBe("INVALID_INPUT");
      expect(text).toMatch(message);
    }
    expect(await skills.load("deploy")).toBe("safe");
    expect(await skills.get()).toBe("- deploy: Deploying");
    for (const options of [
      { prefix: "a\nb/" },
      { prefix: 7 },
      { keys: "deploy" },
      { keys: ["ok", "bad\nkey"] },
    ]) {
      const { code } = await refusal(() => new R2SkillProvider(env.SKILLS_BUCKET, options as never));
      expect(code, JSON.stringify(options)).toBe("INVALID_CONFIG");
    }
  });
});
