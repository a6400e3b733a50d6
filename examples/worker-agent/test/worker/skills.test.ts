import { env } from "cloudflare:test";
import { R2SkillProvider } from "@contextblocks/r2";
import { describe, expect, it } from "vitest";
import { SKILLS_PREFIX } from "../../src/agent-context.js";
import { chat, inspectorHtml, prompt, refresh, snapshot } from "./helpers.js";

const REVIEW = "# Reviewing a pull request\n\n1. Read the diff twice.\n2. Run pnpm verify.";

describe("the skills block (R2)", () => {
  it("lists the bucket's skills, loads and unloads one, and keeps the prompt and tools byte-identical", async () => {
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix: SKILLS_PREFIX });
    await skills.set("code-review", REVIEW, "Checklist for reviewing a pull request");
    await skills.set("deploy-worker", "wrangler deploy", "How to deploy this Worker");

    const agent = "skills-cycle";
    const frozen = await prompt(agent);
    expect(frozen).toContain("- code-review: Checklist for reviewing a pull request");
    expect(frozen).toContain("- deploy-worker: How to deploy this Worker");
    expect(frozen).not.toContain("Read the diff twice");
    const before = await snapshot(agent);

    const loaded = await chat(agent, "Load the code-review skill.");
    expect(loaded.toolCalls.map((toolCall) => toolCall.tool)).toEqual(["load_context"]);
    expect(JSON.stringify(loaded.toolCalls[0]?.output)).toContain("Read the diff twice");
    expect(loaded.promptSha256).toBe(before.promptSha256);
    const whileLoaded = await snapshot(agent);
    expect(whileLoaded.blocks.find((block) => block.label === "skills")?.loaded).toEqual(["code-review"]);

    const unloaded = await chat(agent, "Unload the code-review skill.");
    expect(unloaded.toolCalls.map((toolCall) => toolCall.tool)).toEqual(["unload_context"]);
    expect(unloaded.promptSha256).toBe(before.promptSha256);
    const after = await snapshot(agent);
    expect(after.blocks.find((block) => block.label === "skills")?.loaded).toEqual([]);
    expect(JSON.stringify(after.tools), "tool definitions unchanged by the load/unload cycle").toBe(
      JSON.stringify(before.tools),
    );
    expect(after.prompt).toBe(frozen);
  });

  it("shows a skill added later only after a refresh, and names unknown keys in the tool's error", async () => {
    const agent = "skills-later";
    await prompt(agent);
    await new R2SkillProvider(env.SKILLS_BUCKET, { prefix: SKILLS_PREFIX }).set(
      "write-a-changeset",
      "One file per branch and package.",
      "Writing a changeset",
    );
    expect(await prompt(agent)).not.toContain("write-a-changeset");
    const missing = await chat(agent, "Load the juggling skill.");
    expect(missing.reply).toContain('Error: no entry "juggling" in skills.');
    const refreshed = await refresh(agent);
    expect(refreshed.changed).toBe(true);
    expect(refreshed.prompt).toContain("- write-a-changeset: Writing a changeset");
    const page = await inspectorHtml(agent);
    expect(page).toContain("SKILLS");
    const skills = (await snapshot(agent)).blocks.find((block) => block.label === "skills");
    expect(skills?.loaded).toEqual([]);
  });
});
