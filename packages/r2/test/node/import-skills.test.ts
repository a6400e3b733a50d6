import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isContextError } from "@contextblocks/core";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importSkillsDirectory } from "../../src/import/index.js";
import { R2SkillProvider, type SkillBucket } from "../../src/index.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "skills");

// A real local R2 bucket (Miniflare's, the one wrangler dev uses), reached from Node.
let miniflare: Miniflare;
let bucket: SkillBucket;
beforeAll(async () => {
  miniflare = new Miniflare({ modules: true, script: "export default {}", r2Buckets: ["SKILLS"] });
  bucket = (await miniflare.getR2Bucket("SKILLS")) as unknown as SkillBucket;
});
afterAll(() => miniflare.dispose());

describe("importSkillsDirectory", () => {
  it("uploads every SKILL.md with its front-matter name and description, in one call", async () => {
    const imported = await importSkillsDirectory(FIXTURES, bucket, { prefix: "fixtures/" });
    expect(imported).toEqual([
      {
        key: "code-review",
        description: "Checklist for reviewing a pull request",
        file: join("code-review", "SKILL.md"),
        bytes: 70,
      },
      {
        key: "sql",
        description: "Reviewing SQL: it's about bound parameters",
        file: join("nested", "sql", "SKILL.md"),
        bytes: 23,
      },
      {
        key: "pdf-forms",
        description: "Filling PDF forms: read the fields first",
        file: join("pdf-forms", "SKILL.md"),
        bytes: 41,
      },
    ]);
    const skills = new R2SkillProvider(bucket, { prefix: "fixtures/" });
    expect(await skills.get()).toBe(
      [
        "- code-review: Checklist for reviewing a pull request",
        "- pdf-forms: Filling PDF forms: read the fields first",
        "- sql: Reviewing SQL: it's about bound parameters",
      ].join("\n"),
    );
    expect(await skills.load("pdf-forms")).toBe("Read every field, then write each value.\n");
    expect(await skills.load("code-review")).toMatch(/^# Reviewing a pull request\n/);
  });

  it("uploads nothing and lists every problem when any file is bad", async () => {
    const directory = mkdtempSync(join(tmpdir(), "contextblocks-r2-import-"));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(directory, path)), { recursive: true });
        writeFileSync(join(directory, path), text);
      };
      write("good/SKILL.md", "---\nname: good\ndescription: Fine\n---\nok");
      write("twin/SKILL.md", "---\nname: good\n---\nsame name");
      write("SKILL.md", "---\ndescription: at the root, no name\n---\nx");
      write("bad/SKILL.md", `---\nname: "two\\nlines"\n---\nx`);
      const error = await importSkillsDirectory(directory, bucket, { prefix: "bad-import/" }).catch(
        (caught: unknown) => caught,
      );
      expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
      const message = (error as Error).message;
      expect(message).toMatch(/nothing was uploaded/);
      expect(message).toMatch(/- SKILL.md: no front-matter name/);
      expect(message).toMatch(/- bad\/SKILL.md: the skill key "two\\nlines" has a control character/);
      expect(message).toMatch(/- twin\/SKILL.md: the name "good" is also used by good\/SKILL.md/);
      expect(await new R2SkillProvider(bucket, { prefix: "bad-import/" }).get()).toBeNull();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  for (const spelling of ["/", "/./", "//"]) {
    it(`applies the same checks to the directory spelled with a trailing "${spelling}"`, async () => {
      const directory = mkdtempSync(join(tmpdir(), "contextblocks-r2-import-"));
      try {
        writeFileSync(join(directory, "SKILL.md"), "---\ndescription: at the root, no name\n---\nx");
        const error = await importSkillsDirectory(`${directory}${spelling}`, bucket, {
          prefix: "slash-import/",
        }).catch((caught: unknown) => caught);
        expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
        expect((error as Error).message).toMatch(/- SKILL.md: no front-matter name/);
        expect(await new R2SkillProvider(bucket, { prefix: "slash-import/" }).get()).toBeNull();
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    });
  }
});
