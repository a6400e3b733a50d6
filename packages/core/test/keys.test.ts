import { describe, expect, it } from "vitest";
import { entryKey } from "../src/index.js";

/** A small deterministic generator (mulberry32), so the collision sweep is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** How entryKey treats two titles as the same: trimmed, whitespace collapsed, lower-cased. */
function normalize(title: string): string {
  return title.trim().replace(/\s+/g, " ").toLowerCase();
}

describe("entryKey with a title", () => {
  it("plain titles become their slug, as agents/context writes them", () => {
    expect(entryKey("Breakfast notes", "anything")).toBe("breakfast-notes");
    expect(entryKey("deploy", "x")).toBe("deploy");
    expect(entryKey("Project 42 status", "x")).toBe("project-42-status");
  });

  it('"C++" and "C#" get different keys', () => {
    const plus = entryKey("C++", "x");
    const sharp = entryKey("C#", "x");
    expect(plus).not.toBe(sharp);
    expect(plus.startsWith("c--")).toBe(true);
    expect(sharp.startsWith("c--")).toBe(true);
  });

  it("other near-misses differ too", () => {
    const titles = [
      "C",
      "C++",
      "C#",
      "C--",
      "c-",
      "F#",
      "F*",
      "A/B test",
      "A-B test",
      "A B test",
      "a_b test",
      "node.js",
      "nodejs",
      "Ünïcode",
      "unicode",
      "日本語",
      "中文",
      "🙂",
      "🙃",
      "?",
      "!",
    ];
    const keys = titles.map((title) => entryKey(title, "same content"));
    expect(new Set(keys).size).toBe(titles.length);
  });

  it("the same title gives the same key whatever the content, so the entry is updated in place", () => {
    expect(entryKey("C++ tips", "first version")).toBe(entryKey("C++ tips", "second version"));
    expect(entryKey("Breakfast notes", "a")).toBe(entryKey("Breakfast notes", "b"));
  });

  it("titles that differ only in case or surrounding and repeated whitespace are the same title", () => {
    expect(entryKey("  Breakfast   Notes ", "x")).toBe(entryKey("breakfast notes", "y"));
    expect(entryKey("C++  Tips", "x")).toBe(entryKey("c++ tips", "y"));
  });

  it("a dash and a space are different titles and get different keys", () => {
    expect(entryKey("follow up", "x")).not.toBe(entryKey("follow-up", "x"));
    expect(entryKey("a b-c", "x")).not.toBe(entryKey("a-b c", "x"));
  });

  it("keys are bounded in length and made of slug characters", () => {
    const long = "word ".repeat(100);
    for (const title of [long, `${long}+`, "x".repeat(500)]) {
      const key = entryKey(title, "x");
      expect(key.length).toBeLessThanOrEqual(80);
      expect(key).toMatch(/^[a-z0-9-]+$/);
    }
    expect(entryKey(long, "x")).not.toBe(entryKey(`${long}more`, "x"));
  });

  it("a blank title falls back to the content key", () => {
    expect(entryKey("   ", "Some content")).toBe(entryKey(undefined, "Some content"));
    expect(entryKey("", "Some content")).toBe(entryKey(undefined, "Some content"));
  });

  it("different titles never collide over many generated titles", () => {
    const next = random(2026);
    const alphabet = ["a", "b", "c", "1", "2", " ", " ", "-", "+", "#", ".", "é", "中", "/", "_", "A", "B"];
    const seen = new Map<string, string>();
    for (let index = 0; index < 20_000; index++) {
      const length = 1 + Math.floor(next() * 8);
      let title = "";
      for (let position = 0; position < length; position++) {
        title += alphabet[Math.floor(next() * alphabet.length)];
      }
      const normalized = normalize(title);
      if (normalized.length === 0) continue;
      const key = entryKey(title, "content");
      const previous = seen.get(key);
      if (previous !== undefined) expect(previous).toBe(normalized);
      seen.set(key, normalized);
    }
    expect(seen.size).toBeGreaterThan(10_000);
  });

  it("titled keys never meet content keys of plain-word slugs with a double dash", () => {
    expect(entryKey("C++", "x")).toContain("--");
    expect(entryKey("plain words", "x")).not.toContain("--");
    expect(entryKey(undefined, "C++ is great")).not.toContain("--");
  });
});

describe("entryKey without a title", () => {
  it("is the slug of the content's start, a dash and a short stable hash", () => {
    const key = entryKey(undefined, "User prefers green tea in the morning.");
    expect(key).toMatch(/^user-prefers-green-tea-in-the-morning-[0-9a-z]{1,7}$/);
  });

  it("matches agents/context's content key (FNV-1a, base 36)", () => {
    // agents/context: `${slugify(content) || "entry"}-${stableHash(content)}`, FNV-1a 32-bit in base 36.
    let hash = 2166136261;
    const content = "Stand-up Monday 09:30.";
    for (let index = 0; index < content.length; index++) {
      hash ^= content.charCodeAt(index);
      hash = Math.imul(hash, 16777619);
    }
    expect(entryKey(undefined, content)).toBe(`stand-up-monday-09-30-${(hash >>> 0).toString(36)}`);
  });

  it("is stable for the same content and differs for different content with the same start", () => {
    const start = "x".repeat(60);
    expect(entryKey(undefined, `${start} one`)).toBe(entryKey(undefined, `${start} one`));
    expect(entryKey(undefined, `${start} one`)).not.toBe(entryKey(undefined, `${start} two`));
  });

  it('content with no slug characters keys as "entry-<hash>"', () => {
    expect(entryKey(undefined, "中文内容")).toMatch(/^entry-[0-9a-z]+$/);
    expect(entryKey(undefined, "中文内容")).not.toBe(entryKey(undefined, "其他内容"));
    expect(entryKey(undefined, "")).toMatch(/^entry-[0-9a-z]+$/);
  });

  it("slugs at most the first 60 characters", () => {
    const key = entryKey(undefined, `${"abcdefghij".repeat(10)}`);
    const slug = key.slice(0, key.lastIndexOf("-"));
    expect(slug).toBe("abcdefghij".repeat(6));
  });
});
