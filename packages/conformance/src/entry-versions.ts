import {
  type BlockVersion,
  type BlockWrite,
  ContextBlocks,
  type ContextProvider,
  type VersionedSkillProvider,
} from "@contextblocks/core";
import type { WriteSource } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { check, firstMissing, group, needsReopen, type Suite } from "./suite.js";

type Kept = ContextProvider & VersionedSkillProvider;

const LABEL = "skills";

function shape(version: BlockVersion): { version: number; content: string; source: WriteSource } {
  return { version: version.version, content: version.content, source: version.source };
}

/** A source as `ContextBlocks` passes it for a tool call, with a call id. */
function toolSource(call: number): BlockWrite {
  return { source: { kind: "tool", name: "memory", toolCallId: `call-${call}` } };
}

/**
 * Entry versions (the `versions` capability of a loadable block: `versions({ key, … })` beside
 * `set(key, content, description?, write?)`): every write that changes an entry's content is a version of
 * that entry, numbered per key; a description-only change is none; deleting an entry keeps its versions
 * and a later write counts on; `restoreEntry` writes a new version; retention holds per key; versions
 * survive a restart.
 */
export function entryVersionsGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const enabled = suite.declared.versions && suite.kind === "loadable" && suite.declared.writable;
  const retention = suite.options.versionRetention;
  const needsRetention = retention === undefined ? "needs the versionRetention option" : null;
  const needsDelete = suite.declared.delete ? null : "needs the delete capability";

  group("entry versions", suite, enabled, (fixture) => {
    const open = async () => (await fixture.create(LABEL)) as P & Kept;

    check(
      suite,
      "every changed write of an entry is a version of that key, newest first; an unchanged write or a new description is none",
      null,
      async () => {
        const provider = await open();
        expect(await provider.versions({ key: "deploy" }), "versions of a key never written").toEqual([]);
        await provider.set("deploy", "Run the tests.", "How to deploy", toolSource(1));
        await provider.set("other", "Another entry.", undefined, toolSource(2));
        await provider.set("deploy", "Run the tests.", "How we deploy", toolSource(3));
        await provider.set("deploy", "Run the tests, then\nwrangler deploy ✅", undefined, toolSource(4));
        expect((await provider.versions({ key: "deploy" })).map(shape)).toEqual([
          { version: 2, content: "Run the tests, then\nwrangler deploy ✅", source: toolSource(4).source },
          { version: 1, content: "Run the tests.", source: toolSource(1).source },
        ]);
        expect(
          (await provider.versions({ key: "other" })).map(shape),
          "another key counts on its own",
        ).toEqual([{ version: 1, content: "Another entry.", source: toolSource(2).source }]);
        for (const version of await provider.versions({ key: "deploy" })) {
          expect(version.writtenAt, "writtenAt is UTC ISO 8601 (toISOString())").toBe(
            new Date(version.writtenAt).toISOString(),
          );
        }
        expect(await provider.load("deploy"), "the entry itself holds the newest content").toBe(
          "Run the tests, then\nwrangler deploy ✅",
        );
      },
    );

    check(
      suite,
      "versions({ key, limit }) lists the newest limit; versions({ key, version }) only that one",
      null,
      async () => {
        const provider = await open();
        for (const content of ["a", "b", "c", "d"]) await provider.set("notes", content);
        const limited = await provider.versions({ key: "notes", limit: 2 });
        expect(limited.map((version) => version.content)).toEqual(["d", "c"]);
        expect((await provider.versions({ key: "notes", version: 2 })).map(shape)).toEqual([
          { version: 2, content: "b", source: expect.any(Object) },
        ]);
        expect(await provider.versions({ key: "notes", version: 99 }), "a version never written").toEqual([]);
      },
    );

    check(
      suite,
      "a deleted entry keeps its versions; writing the key again counts on",
      needsDelete,
      async () => {
        const provider = await open();
        await provider.set("draft", "first", undefined, toolSource(1));
        await provider.set("draft", "second", undefined, toolSource(2));
        await (provider as Kept & { delete(key: string): Promise<void> }).delete("draft");
        expect(await provider.load("draft"), "load() after delete").toBeNull();
        expect((await provider.versions({ key: "draft" })).map((version) => version.version)).toEqual([2, 1]);
        await provider.set("draft", "third");
        expect((await provider.versions({ key: "draft", limit: 1 }))[0]?.version).toBe(3);
      },
    );

    check(
      suite,
      "restoreEntry writes an old version again as the entry's newest, leaving the earlier ones as they were",
      null,
      async () => {
        const provider = await open();
        const context = new ContextBlocks([{ label: LABEL, description: "Skills", provider }]);
        await context.load();
        await context.setEntry(LABEL, "deploy", "Run the tests.");
        await context.setEntry(LABEL, "deploy", "Skip the tests.", undefined, {
          source: { kind: "tool", name: "memory", toolCallId: "call-1" },
        });
        const before = (await provider.versions({ key: "deploy" })).map(shape);
        expect(before[0]?.source, "setEntry passes its source to the provider").toEqual({
          kind: "tool",
          name: "memory",
          toolCallId: "call-1",
        });
        await context.restoreEntry(LABEL, "deploy", 1);
        expect(await provider.load("deploy")).toBe("Run the tests.");
        const after = (await provider.versions({ key: "deploy" })).map(shape);
        expect(after[0]).toEqual({
          version: 3,
          content: "Run the tests.",
          source: { kind: "api", name: "restoreEntry", restoredFrom: 1 },
        });
        expect(after.slice(1), "the versions before the restore are unchanged").toEqual(
          before.slice(0, after.length - 1),
        );
        expect((await context.entryVersions(LABEL, "deploy")).map(shape)).toEqual(after);
      },
    );

    check(
      suite,
      `keeps only the newest versionRetention (${retention ?? "option"}) versions of each key`,
      needsRetention,
      async () => {
        const kept = retention ?? 1;
        const provider = await open();
        const writes = kept + 3;
        for (let index = 1; index <= writes; index++) await provider.set("busy", `version ${index}`);
        await provider.set("quiet", "only one");
        const versions = await provider.versions({ key: "busy", limit: writes });
        expect(versions.length, `versions listed after ${writes} writes with retention ${kept}`).toBe(kept);
        expect(versions[0]?.version).toBe(writes);
        expect(versions.at(-1)?.version, "the oldest kept version").toBe(writes - kept + 1);
        expect(
          await provider.versions({ key: "busy", version: 1 }),
          "version 1 is past the retention",
        ).toEqual([]);
        expect((await provider.versions({ key: "quiet" })).length, "another key keeps its own").toBe(1);
      },
    );

    check(suite, "a refused write leaves no version", null, async () => {
      const provider = await open();
      await provider.set("kept", "kept", undefined, toolSource(1));
      const before = await provider.versions({ key: "kept" });
      let refused = false;
      try {
        await provider.set("kept", 42 as unknown as string, undefined, toolSource(2));
      } catch {
        refused = true;
      }
      expect(refused, "set(key, 42) is refused: content must be a string").toBe(true);
      expect(await provider.load("kept")).toBe("kept");
      expect(await provider.versions({ key: "kept" })).toEqual(before);
    });

    check(
      suite,
      "entry versions survive a restart: a new instance on the same store lists them and counts on",
      firstMissing(needsReopen(suite)),
      async () => {
        const provider = await open();
        await provider.set("deploy", "before the restart", undefined, toolSource(1));
        await provider.set("deploy", "still before", undefined, toolSource(2));
        const before = await provider.versions({ key: "deploy" });
        const reopened = (await fixture.reopen(provider, LABEL)) as P & Kept;
        expect(await reopened.versions({ key: "deploy" })).toEqual(before);
        await reopened.set("deploy", "after the restart");
        expect((await reopened.versions({ key: "deploy" })).map((version) => version.version)).toEqual([
          3, 2, 1,
        ]);
      },
    );
  });
}
