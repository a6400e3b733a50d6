import type { ContextProvider } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { initialize } from "./fixture.js";
import { MARKERS, needsProbe, type Probe, probeFor } from "./probe.js";
import { check, firstMissing, group, needsReopen, type Suite } from "./suite.js";
import { isPromiseLike } from "./values.js";

/** Labels a careless provider confuses: prefixes, LIKE wildcards, quotes, object-prototype names. */
export const AWKWARD_LABELS = [
  "notes",
  "notes-archive",
  "note%",
  "note_",
  `o'brien "notes"; --`,
  "__proto__",
  "constructor",
  "ノート 📝",
] as const;

/**
 * Readable: `get()` resolves to a string or `null`; `init(label)` is honoured; labels on one backing store
 * are separate blocks; the factory gives isolated providers.
 */
export function readableGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const probe = probeFor(suite);
  group("readable", suite, suite.declared.readable, (fixture) => {
    check(suite, "get() returns a promise of a string or null", null, async () => {
      const provider = await fixture.create("notes");
      expect(typeof provider.get, "get is a function").toBe("function");
      const pending = provider.get();
      expect(isPromiseLike(pending), "get() returns a promise (provider methods are async)").toBe(true);
      const value = await pending;
      expect(value === null || typeof value === "string", `get() resolved to ${describeValue(value)}`).toBe(
        true,
      );
    });

    check(suite, "get() returns the same value when nothing was written", null, async () => {
      const provider = await fixture.create("notes");
      const first = await provider.get();
      const second = await provider.get();
      expect(second).toBe(first);
    });

    check(suite, "init(label) accepts being called before first use", null, async () => {
      const provider = await fixture.create();
      await initialize(provider, "notes");
      const value = await provider.get();
      expect(value === null || typeof value === "string").toBe(true);
    });

    check(
      suite,
      "the factory returns a new, isolated provider on every call",
      needsProbe(suite),
      async () => {
        const live = probe as Probe<P>;
        const first = await fixture.create("notes");
        const second = await fixture.create("notes");
        expect(second, "the factory returned the same object twice").not.toBe(first);
        await live.write(first, MARKERS[0]);
        expect(await live.sees(first, MARKERS[0]), `written through ${live.via}, then not seen`).toBe(true);
        expect(
          await live.sees(second, MARKERS[0]),
          "a provider from a second factory call sees the first one's block",
        ).toBe(false);
      },
    );

    check(
      suite,
      "init(label) is honoured: an instance on the same store with the same label sees the block",
      firstMissing(needsReopen(suite), needsProbe(suite)),
      async (test) => {
        const live = probe as Probe<P>;
        const writer = await fixture.create();
        test.skip(typeof writer.init !== "function", "the provider has no init(label)");
        await initialize(writer, "alpha");
        await live.write(writer, MARKERS[0]);
        const sameLabel = await fixture.reopen(writer, "alpha");
        expect(await live.sees(sameLabel, MARKERS[0]), "a reopened instance with the same label").toBe(true);
        const otherLabel = await fixture.reopen(writer, "beta");
        expect(await live.sees(otherLabel, MARKERS[0]), "a reopened instance with another label").toBe(false);
      },
    );

    check(
      suite,
      "two labels on the same backing store do not see each other's content",
      firstMissing(needsReopen(suite), needsProbe(suite)),
      async (test) => {
        const live = probe as Probe<P>;
        const alpha = await fixture.create();
        test.skip(typeof alpha.init !== "function", "the provider has no init(label)");
        await initialize(alpha, "alpha");
        const beta = await fixture.reopen(alpha, "beta");
        await live.write(alpha, MARKERS[0]);
        await live.write(beta, MARKERS[1]);
        expect(await live.sees(alpha, MARKERS[0]), "alpha sees its own content").toBe(true);
        expect(await live.sees(beta, MARKERS[1]), "beta sees its own content").toBe(true);
        expect(await live.sees(alpha, MARKERS[1]), "alpha sees beta's content").toBe(false);
        expect(await live.sees(beta, MARKERS[0]), "beta sees alpha's content").toBe(false);
        const alphaAgain = await fixture.reopen(alpha, "alpha");
        expect(await live.sees(alphaAgain, MARKERS[0]), "a reopened alpha sees alpha's content").toBe(true);
        expect(await live.sees(alphaAgain, MARKERS[1]), "a reopened alpha sees beta's content").toBe(false);
      },
    );

    check(
      suite,
      "labels with shared prefixes, wildcards, quotes, unicode or prototype names are separate blocks",
      firstMissing(needsReopen(suite), needsProbe(suite)),
      async (test) => {
        const live = probe as Probe<P>;
        const base = await fixture.create();
        test.skip(typeof base.init !== "function", "the provider has no init(label)");
        for (const [index, label] of AWKWARD_LABELS.entries()) {
          await live.write(await fixture.reopen(base, label), MARKERS[index] as string);
        }
        for (const [index, label] of AWKWARD_LABELS.entries()) {
          const reader = await fixture.reopen(base, label);
          for (const [other, marker] of MARKERS.entries()) {
            if (other >= AWKWARD_LABELS.length) break;
            expect(
              await live.sees(reader, marker),
              `label ${JSON.stringify(label)} ${other === index ? "does not see its own" : `sees ${JSON.stringify(AWKWARD_LABELS[other])}'s`} content`,
            ).toBe(other === index);
          }
        }
      },
    );
  });
}
