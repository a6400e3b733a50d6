import type { ContextProvider, SkillProvider } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { expectSameText } from "./compare.js";
import { startConcurrently } from "./scheduling.js";
import { check, concurrencyCheck, firstMissing, group, needsReopen, type Suite } from "./suite.js";
import { largeText } from "./texts.js";
import { isPromiseLike } from "./values.js";

type Loadable = ContextProvider &
  SkillProvider & { set(key: string, content: string, description?: string): Promise<void> };
type Deletable = { delete(key: string): Promise<void> };

/** An entry's full text: multi-line, unicode, quotes, and long enough that a preview would not pass. */
export const SKILL_TEXT =
  "# Deploying the worker\n\n1. Run `pnpm build`.\n2. Check the \"staging\" URL — it's 'green' ✅ 🚀\n" +
  "3. '); DROP TABLE skills; --\n\n" +
  largeText(32_768);

export const SKILLS = {
  deploy: {
    key: "deploy-worker",
    description: "How to deploy the worker to production",
    content: SKILL_TEXT,
  },
  review: {
    key: "code-review",
    description: "Checklist for reviewing a pull request",
    content: "Read the diff twice.\nRun the tests.\nAsk about anything unclear.",
  },
} as const;

/**
 * Loadable: `get()` lists keys with descriptions, `load(key)` returns the full text or `null`, and
 * `set(key, content, description)` adds or replaces an entry.
 */
export function loadableGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const needsSet = suite.declared.writable ? null : "needs set(key, content, description)";
  const needsDelete = suite.declared.delete ? null : "needs delete(key)";
  const writers = suite.writers;

  group("loadable", suite, suite.declared.loadable, (fixture) => {
    const open = async (label = "skills") => (await fixture.create(label)) as P & Loadable;
    const reopen = async (provider: P, label = "skills") =>
      (await fixture.reopen(provider, label)) as P & Loadable;
    const withSkills = async (label = "skills") => {
      const provider = await open(label);
      for (const skill of Object.values(SKILLS))
        await provider.set(skill.key, skill.content, skill.description);
      return provider;
    };

    check(suite, "get() is null or empty when there are no entries", null, async () => {
      const value = await (await open()).get();
      expect(value === null || value.trim() === "", `get() returned ${describeValue(value)}`).toBe(true);
    });

    check(suite, "load(key) returns a promise of null for an unknown key", null, async () => {
      const provider = await open();
      const pending = provider.load("never-written");
      expect(isPromiseLike(pending), "load() returns a promise").toBe(true);
      expect(await pending).toBeNull();
    });

    check(suite, "get() lists each entry's key and description, not its text", needsSet, async () => {
      const listing = await (await withSkills()).get();
      expect(typeof listing, `get() returned ${describeValue(listing)}`).toBe("string");
      for (const skill of Object.values(SKILLS)) {
        expect(listing, "the listing names each key").toContain(skill.key);
        expect(listing, "the listing gives each description").toContain(skill.description);
      }
      expect(listing, "the listing holds an entry's full text").not.toContain(SKILLS.review.content);
    });

    check(suite, "load(key) returns the entry's full text unchanged", needsSet, async () => {
      const provider = await withSkills();
      for (const skill of Object.values(SKILLS)) {
        expectSameText(await provider.load(skill.key), skill.content, `load(${JSON.stringify(skill.key)})`);
      }
      expect(await provider.load("deploy"), "a key prefix loads an entry").toBeNull();
    });

    check(
      suite,
      "set(key, content, description) replaces an entry's text and description",
      needsSet,
      async () => {
        const provider = await withSkills();
        await provider.set(SKILLS.review.key, "Only one step now.", "A shorter review guide");
        expectSameText(
          await provider.load(SKILLS.review.key),
          "Only one step now.",
          "load() after replacing",
        );
        const listing = (await provider.get()) ?? "";
        expect(listing).toContain("A shorter review guide");
        expect(listing, "the old description is still listed").not.toContain(SKILLS.review.description);
        expect(listing.split(SKILLS.review.key).length - 1, "the key is listed once").toBe(1);
        expectSameText(await provider.load(SKILLS.deploy.key), SKILLS.deploy.content, "the other entry");
      },
    );

    check(
      suite,
      "set(key, content) without a description adds a listed, loadable entry",
      needsSet,
      async () => {
        const provider = await open();
        await provider.set("plain-entry", "No description here.");
        expect((await provider.get()) ?? "").toContain("plain-entry");
        expectSameText(await provider.load("plain-entry"), "No description here.", "load()");
      },
    );

    check(
      suite,
      "a fresh instance on the same backing store loads what an earlier one wrote",
      firstMissing(needsSet, needsReopen(suite)),
      async () => {
        const reader = await reopen(await withSkills());
        expectSameText(await reader.load(SKILLS.deploy.key), SKILLS.deploy.content, "reopened load()");
        expect((await reader.get()) ?? "").toContain(SKILLS.review.description);
      },
    );

    check(
      suite,
      "an instance that loaded an entry loads and lists what another instance wrote since (no read cache)",
      firstMissing(needsSet, needsReopen(suite)),
      async () => {
        const reader = await withSkills();
        expectSameText(
          await reader.load(SKILLS.review.key),
          SKILLS.review.content,
          "the reader's own load()",
        );
        await reader.get();
        const writer = await reopen(reader);
        await writer.set(SKILLS.review.key, "Rewritten by another instance.", "Another instance's guide");
        expectSameText(
          await reader.load(SKILLS.review.key),
          "Rewritten by another instance.",
          "load() on an instance that loaded the entry before another instance rewrote it",
        );
        expect(
          (await reader.get()) ?? "",
          "get() on an instance that listed the entries before another instance rewrote one",
        ).toContain("Another instance's guide");
      },
    );

    check(
      suite,
      "labels are isolated: listing and load see only their own label's entries",
      firstMissing(needsSet, needsReopen(suite)),
      async (test) => {
        const alpha = await withSkills("alpha");
        test.skip(typeof alpha.init !== "function", "the provider has no init(label)");
        const beta = await reopen(alpha, "beta");
        expect(await beta.load(SKILLS.deploy.key), "beta loads alpha's entry").toBeNull();
        const listing = await beta.get();
        expect(listing === null || !listing.includes(SKILLS.deploy.key), "beta lists alpha's entry").toBe(
          true,
        );
        await beta.set(SKILLS.deploy.key, "Beta's own deploy notes.", "Beta deploys");
        expectSameText(await alpha.load(SKILLS.deploy.key), SKILLS.deploy.content, "alpha after beta wrote");
        expect((await alpha.get()) ?? "", "alpha lists beta's description").not.toContain("Beta deploys");
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent set() calls of different keys keep every entry`,
      needsSet,
      async () => {
        const keys = Array.from({ length: writers }, (_, index) => `entry-${index}`);
        for (const schedule of suite.schedules) {
          const provider = await open();
          await startConcurrently(writers, schedule, (index) =>
            provider.set(keys[index] as string, `Text of ${keys[index]}.`, `About ${keys[index]}`),
          );
          for (const key of keys) {
            expectSameText(await provider.load(key), `Text of ${key}.`, `load(${key}) (${schedule.name})`);
          }
          const listing = (await provider.get()) ?? "";
          for (const key of keys)
            expect(listing, `every key is listed (${schedule.name})`).toContain(`About ${key}`);
        }
      },
    );

    check(
      suite,
      "delete(key) removes the entry from load and the listing",
      firstMissing(needsSet, needsDelete),
      async () => {
        const provider = (await withSkills()) as P & Loadable & Deletable;
        await provider.delete(SKILLS.review.key);
        expect(await provider.load(SKILLS.review.key)).toBeNull();
        expect((await provider.get()) ?? "").not.toContain(SKILLS.review.key);
        expectSameText(await provider.load(SKILLS.deploy.key), SKILLS.deploy.content, "the other entry");
      },
    );

    check(suite, "delete(key) of an unknown key resolves", needsDelete, async () => {
      await ((await open()) as P & Loadable & Deletable).delete("never-written");
    });
  });
}
