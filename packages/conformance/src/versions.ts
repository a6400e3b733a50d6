import {
  type BlockVersion,
  type BlockWrite,
  ContextBlocks,
  type ContextProvider,
  type VersionedProvider,
} from "@contextblocks/core";
import { describeValue, hasMethod, type WriteSource } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { check, firstMissing, group, needsReopen, type Suite } from "./suite.js";

type Kept = ContextProvider & VersionedProvider & { setIf?(...args: unknown[]): Promise<boolean> };

const LABEL = "notes";

/** The fields of a version the suite compares (the time is checked on its own: its value is the provider's). */
function shape(version: BlockVersion): { version: number; content: string; source: WriteSource } {
  return { version: version.version, content: version.content, source: version.source };
}

/** A source as `ContextBlocks` passes it for a tool call, with a call id. */
function toolSource(call: number): BlockWrite {
  return { source: { kind: "tool", name: "edit_context", toolCallId: `call-${call}` } };
}

/**
 * Versions (the `versions` capability: `versions(query?)` beside a whole-block `set`): every changed write is a
 * version `{ version, content, writtenAt, source }`, listed newest first; `restoreBlock` writes a new version
 * and never rewrites the old ones; retention holds; a failed write leaves no version; versions survive a
 * restart.
 */
export function versionsGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const enabled = suite.declared.versions && suite.kind === "writable";
  const retention = suite.options.versionRetention;
  const needsRetention = retention === undefined ? "needs the versionRetention option" : null;

  group("versions", suite, enabled, (fixture) => {
    const open = async () => (await fixture.create(LABEL)) as P & Kept;

    check(
      suite,
      "every changed write is a version { version, content, writtenAt, source }, newest first; an unchanged write is none",
      null,
      async () => {
        const provider = await open();
        expect(await provider.versions(), "versions() before any write").toEqual([]);
        await provider.set("first", toolSource(1));
        await provider.set("second", { source: { kind: "api", name: "setBlock" } });
        await provider.set("second", toolSource(2));
        await provider.set("third\nwith a second line ✅", toolSource(3));
        const versions = await provider.versions();
        expect(versions.map(shape), "versions() after three changed writes and one unchanged").toEqual([
          { version: 3, content: "third\nwith a second line ✅", source: toolSource(3).source },
          { version: 2, content: "second", source: { kind: "api", name: "setBlock" } },
          { version: 1, content: "first", source: toolSource(1).source },
        ]);
        for (const version of versions) {
          const time = new Date(version.writtenAt);
          expect(
            typeof version.writtenAt === "string" && !Number.isNaN(time.getTime()),
            `writtenAt is an ISO 8601 time, got ${describeValue(version.writtenAt)}`,
          ).toBe(true);
          expect(version.writtenAt, "writtenAt is UTC ISO 8601 (toISOString())").toBe(time.toISOString());
        }
        expect(
          Date.parse(versions[2]?.writtenAt ?? "") <= Date.parse(versions[0]?.writtenAt ?? ""),
          "a newer version is not written before an older one",
        ).toBe(true);
      },
    );

    check(
      suite,
      "versions({ limit }) lists the newest limit; versions({ version }) only that one",
      null,
      async () => {
        const provider = await open();
        for (const content of ["a", "b", "c", "d"]) await provider.set(content);
        expect((await provider.versions({ limit: 2 })).map((version) => version.content)).toEqual(["d", "c"]);
        expect((await provider.versions({ version: 2 })).map(shape)).toEqual([
          { version: 2, content: "b", source: expect.any(Object) },
        ]);
        expect(await provider.versions({ version: 99 }), "a version never written").toEqual([]);
      },
    );

    check(
      suite,
      "restoreBlock writes the old content as a new version and leaves every earlier version as it was",
      null,
      async () => {
        const provider = await open();
        const context = new ContextBlocks([{ label: LABEL, description: "History", provider }]);
        await context.load();
        await context.setBlock(LABEL, "Name: Ada");
        await context.setBlock(LABEL, "Name: Ada\nCity: Paris");
        await context.appendToBlock(LABEL, "Likes: tea");
        const before = (await provider.versions()).map(shape);
        const restored = await context.restoreBlock(LABEL, 1);
        expect(restored.content, "restoreBlock returns the block with the old content").toBe("Name: Ada");
        expect(await provider.get(), "get() after restoreBlock").toBe("Name: Ada");
        const after = (await provider.versions()).map(shape);
        expect(after[0], "the restore is the newest version").toEqual({
          version: 4,
          content: "Name: Ada",
          source: { kind: "api", name: "restoreBlock", restoredFrom: 1 },
        });
        // A small retention may drop the oldest; every version still listed is as it was.
        expect(after.slice(1), "the versions before the restore are unchanged").toEqual(
          before.slice(0, after.length - 1),
        );
        expect((await context.blockVersions(LABEL)).map(shape), "blockVersions() lists the same").toEqual(
          after,
        );
      },
    );

    check(
      suite,
      `keeps only the newest versionRetention (${retention ?? "option"}) versions, and their numbers go on counting`,
      needsRetention,
      async () => {
        const kept = retention ?? 1;
        const provider = await open();
        const writes = kept + 3;
        for (let index = 1; index <= writes; index++) await provider.set(`version ${index}`);
        const versions = await provider.versions({ limit: writes });
        expect(versions.length, `versions listed after ${writes} writes with retention ${kept}`).toBe(kept);
        expect(versions[0]?.version).toBe(writes);
        expect(versions.at(-1)?.version, "the oldest kept version").toBe(writes - kept + 1);
        expect(await provider.versions({ version: 1 }), "version 1 is past the retention").toEqual([]);
        await provider.set("one more");
        expect((await provider.versions({ limit: 1 }))[0]?.version).toBe(writes + 1);
      },
    );

    check(
      suite,
      "a failed write leaves no version (a refused value, a conditional write that lost)",
      null,
      async () => {
        const provider = await open();
        await provider.set("kept", toolSource(1));
        const before = await provider.versions();
        let refused = false;
        try {
          await provider.set(42 as unknown as string, toolSource(2));
        } catch {
          refused = true;
        }
        expect(refused, "set(42) is refused: content must be a string").toBe(true);
        if (hasMethod(provider, "setIf")) {
          expect(
            await (provider as Kept & { setIf: NonNullable<Kept["setIf"]> }).setIf("not the text", "lost"),
            "setIf with another text than the stored one resolves false",
          ).toBe(false);
        }
        expect(await provider.get(), "get() after the failed writes").toBe("kept");
        expect(await provider.versions(), "versions() after the failed writes").toEqual(before);
      },
    );

    check(
      suite,
      "versions survive a restart: a new instance on the same store lists them and counts on",
      firstMissing(needsReopen(suite)),
      async () => {
        const provider = await open();
        await provider.set("before the restart", toolSource(1));
        await provider.set("still before", toolSource(2));
        const before = await provider.versions();
        const reopened = (await fixture.reopen(provider, LABEL)) as P & Kept;
        expect(await reopened.versions(), "versions() on a reopened instance").toEqual(before);
        await reopened.set("after the restart");
        expect((await reopened.versions()).map((version) => version.version)).toEqual([3, 2, 1]);
      },
    );
  });
}
