import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { SqliteSkillProvider } from "../../src/index.js";
import { inObject } from "./in-object.js";

describe("SqliteSkillProvider in a Durable Object", () => {
  it("lists in key order, loads, deletes, and keeps namespaces apart", async () => {
    await inObject("skills-basic", async (state) => {
      const skills = new SqliteSkillProvider(state.storage, "skills");
      const tenant = new SqliteSkillProvider(state.storage, { label: "skills", namespace: "tenant-a" });
      await skills.set("review", "Read the diff.", "Reviewing");
      await skills.set("deploy", "Ship it.", "Deploying");
      await tenant.set("deploy", "Tenant ships.", "Tenant deploys");
      expect(await skills.get()).toBe("- deploy: Deploying\n- review: Reviewing");
      expect(await tenant.get()).toBe("- deploy: Tenant deploys");
      await skills.delete("deploy");
      expect(await skills.load("deploy")).toBeNull();
      expect(await tenant.load("deploy")).toBe("Tenant ships.");
    });
  });

  it("refuses lone surrogates and line breaks with a clear error and keeps the stored skill", async () => {
    await inObject("skills-bad-input", async (state) => {
      const skills = new SqliteSkillProvider(state.storage, "skills");
      await skills.set("deploy", "safe", "About");
      for (const attempt of [
        () => skills.set("deploy", "broken \udfff"),
        () => skills.set("deploy\ud800", "x"),
        () => skills.set("deploy", "x", "line\nbreak"),
      ]) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
        expect((error as Error).message).toMatch(/SqliteSkillProvider\.set: |SqliteSkillProvider: the/);
      }
      expect(await skills.load("deploy")).toBe("safe");
      expect(await skills.get()).toBe("- deploy: About");
    });
  });
});
