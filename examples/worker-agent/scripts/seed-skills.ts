/**
 * `pnpm seed-skills [--persist-to DIR]`: uploads every `skills/<name>/SKILL.md` into the local R2 bucket
 * `wrangler dev` uses for SKILLS_BUCKET, under the prefix the agent reads. Without `--persist-to`,
 * wrangler's default state folder (`.wrangler/state`). The demo calls `seedSkills` with its own temporary
 * folder before it starts `wrangler dev` on it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type ImportedSkill, importSkillsDirectory, type SkillPutTarget } from "@contextblocks/r2/import";
import { getPlatformProxy } from "wrangler";
import { SKILLS_BUCKET_NAME, SKILLS_PREFIX } from "../src/skills-bucket.js";
import { EXAMPLE_ROOT } from "./wrangler-dev.js";

/** The SKILL.md folder the example ships. */
export const SKILLS_DIRECTORY = join(EXAMPLE_ROOT, "skills");

/**
 * Uploads the example's skills into the local bucket of the `wrangler dev` state in `persistTo` (the
 * folder given to `wrangler dev --persist-to`), through wrangler's own local R2 binding.
 */
export async function seedSkills(persistTo: string): Promise<ImportedSkill[]> {
  const wranglerConfig = readFileSync(join(EXAMPLE_ROOT, "wrangler.jsonc"), "utf8");
  if (!wranglerConfig.includes(`"bucket_name": "${SKILLS_BUCKET_NAME}"`))
    throw new Error(`wrangler.jsonc has no R2 bucket named ${SKILLS_BUCKET_NAME} (src/skills-bucket.ts)`);
  // A config with the bucket alone: local R2 data is kept per bucket name, so wrangler dev sees the same
  // objects, and the Worker itself need not be built to upload.
  const configDirectory = mkdtempSync(join(tmpdir(), "worker-agent-seed-"));
  const configPath = join(configDirectory, "wrangler.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      name: "worker-agent-skills-seed",
      compatibility_date: "2026-04-01",
      r2_buckets: [{ binding: "SKILLS_BUCKET", bucket_name: SKILLS_BUCKET_NAME }],
    }),
  );
  process.env.WRANGLER_SEND_METRICS ??= "false";
  try {
    const platform = await getPlatformProxy<{ SKILLS_BUCKET: SkillPutTarget }>({
      configPath,
      // wrangler dev --persist-to DIR keeps its state in DIR/v3; getPlatformProxy takes that inner folder.
      persist: { path: join(persistTo, "v3") },
      remoteBindings: false,
    });
    try {
      return await importSkillsDirectory(SKILLS_DIRECTORY, platform.env.SKILLS_BUCKET, {
        prefix: SKILLS_PREFIX,
      });
    } finally {
      await platform.dispose();
    }
  } finally {
    rmSync(configDirectory, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const flag = process.argv.indexOf("--persist-to");
  const persistTo = resolve(
    flag === -1 ? join(EXAMPLE_ROOT, ".wrangler", "state") : (process.argv[flag + 1] ?? ""),
  );
  seedSkills(persistTo).then(
    (skills) => {
      for (const skill of skills)
        console.log(`${SKILLS_PREFIX}${skill.key}  ${skill.bytes} bytes  ${skill.description ?? ""}`);
      console.log(`Uploaded ${skills.length} skill(s) into the local bucket in ${persistTo}.`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
