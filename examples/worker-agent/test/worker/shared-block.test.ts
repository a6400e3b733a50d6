import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createAgentContext } from "../../src/agent-context.js";
import type { AgentObject } from "../../src/agent-object.js";
import { call, prompt, snapshot } from "./helpers.js";

/** The agent's blocks: a private field, read the way code inside the object reads it. */
function contextOf(object: AgentObject) {
  // biome-ignore lint/complexity/useLiteralKeys: bracket access is how a test reaches a private field
  return object["context"];
}

/** Runs `work` inside an agent's Durable Object with its ContextBlocks. */
function inAgent<T>(agent: string, work: (object: AgentObject) => Promise<T>): Promise<T> {
  return runInDurableObject(env.AGENT.getByName(agent), work);
}

describe("a user profile block shared by two agents (two Durable Objects)", () => {
  it("one agent's edit reaches the other as a reminder; concurrent edits both land; history and restore over HTTP", async () => {
    const [work, home] = ["profile-work", "profile-home"];
    const workPrompt = await prompt(work);
    const homePrompt = await prompt(home);
    expect(homePrompt).toContain("PROFILE");

    await inAgent(work, (object) =>
      contextOf(object).setBlock("profile", "Name: Ada\nCity: Paris\nEditor: Vim"),
    );
    await Promise.all([
      inAgent(work, (object) => contextOf(object).editBlock("profile", "City: Paris", "City: Lyon")),
      inAgent(home, (object) => contextOf(object).editBlock("profile", "Editor: Vim", "Editor: Helix")),
    ]);

    // The other agent: its frozen prompt is unchanged, the new text arrives as a reminder.
    expect(await prompt(home)).toBe(homePrompt);
    expect(await prompt(work)).toBe(workPrompt);
    const reminder = (await snapshot(home)).reminder ?? "";
    expect(reminder).toContain("Name: Ada\nCity: Lyon\nEditor: Helix");

    // An edit whose old_str another agent already changed fails instead of overwriting.
    const failed = await inAgent(home, (object) =>
      contextOf(object)
        .editBlock("profile", "City: Paris", "City: Rome")
        .then(
          () => "written",
          (error: { code?: string }) => error.code,
        ),
    );
    expect(failed).toBe("NO_MATCH");

    const history = await call(`/agents/${home}/history?label=profile&limit=5`);
    expect(history.status).toBe(200);
    const versions = (await history.json()) as {
      version: number;
      content: string;
      source: { name: string };
    }[];
    expect(versions.map((version) => version.version)).toEqual([3, 2, 1]);
    expect(versions[2]?.content).toBe("Name: Ada\nCity: Paris\nEditor: Vim");

    const restored = await call(`/agents/${work}/restore`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ label: "profile", version: 1 }),
    });
    expect(restored.status).toBe(200);
    expect(await restored.json()).toMatchObject({
      label: "profile",
      version: 1,
      content: "Name: Ada\nCity: Paris\nEditor: Vim",
    });
    expect((await snapshot(home)).reminder ?? "").toContain("City: Paris");
    const after = (await (await call(`/agents/${home}/history?label=profile&limit=1`)).json()) as {
      version: number;
      source: { name: string; restoredFrom?: number };
    }[];
    expect(after[0]).toMatchObject({ version: 4, source: { name: "restoreBlock", restoredFrom: 1 } });

    expect((await call(`/agents/${home}/history?label=soul`)).status).toBe(400);
    expect((await call(`/agents/${home}/history?label=profile&limit=0`)).status).toBe(400);
    const missing = await call(`/agents/${home}/restore`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ label: "profile", version: 99 }),
    });
    expect(missing.status).toBe(404);
  });

  it("the agent's own memory block keeps history across a restart of its object (in workerd)", async () => {
    const agent = "memory-history";
    await prompt(agent);
    await inAgent(agent, async (object) => {
      await contextOf(object).setBlock("memory", "- likes tea");
      await contextOf(object).editBlock("memory", "tea", "coffee");
    });
    // A new ContextBlocks on the same storage (as after an eviction) reads the versions from SQLite.
    const versions = await inAgent(agent, async (object) => {
      const fresh = createAgentContext(object["ctx"].storage, env.SKILLS_BUCKET, object["settings"]);
      return fresh.blockVersions("memory");
    });
    expect(versions.map((version) => [version.version, version.content])).toEqual([
      [2, "- likes coffee"],
      [1, "- likes tea"],
    ]);
    const restored = await call(`/agents/${agent}/restore`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ label: "memory", version: 1 }),
    });
    expect(await restored.json()).toMatchObject({ content: "- likes tea" });
  });
});
