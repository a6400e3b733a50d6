import type { ContextProvider } from "@contextblocks/core";
import { expect } from "vitest";
import { initialize } from "./fixture.js";
import { MARKERS, needsProbe, type Probe, probeFor } from "./probe.js";
import { check, firstMissing, group, type Suite } from "./suite.js";

/**
 * Namespacing: one backing store, several namespaces (tenants, agents, table prefixes); the same label in
 * two namespaces is two blocks.
 */
export function namespacingGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const probe = probeFor(suite);
  const needsOption = suite.options.namespace ? null : "needs the namespace option";

  group("namespacing", suite, suite.declared.namespacing, (fixture) => {
    check(
      suite,
      "one label in two namespaces on one backing store is two separate blocks",
      firstMissing(needsOption, needsProbe(suite)),
      async () => {
        const live = probe as Probe<P>;
        const base = await fixture.create();
        const first = await fixture.namespace(base, "tenant-one", "notes");
        const second = await fixture.namespace(base, "tenant-two", "notes");
        await live.write(first, MARKERS[0]);
        await live.write(second, MARKERS[1]);
        expect(await live.sees(first, MARKERS[0]), "tenant-one sees its own block").toBe(true);
        expect(await live.sees(second, MARKERS[1]), "tenant-two sees its own block").toBe(true);
        expect(await live.sees(first, MARKERS[1]), "tenant-one sees tenant-two's block").toBe(false);
        expect(await live.sees(second, MARKERS[0]), "tenant-two sees tenant-one's block").toBe(false);
      },
    );

    check(
      suite,
      "a namespace opened again on the same backing store sees its blocks",
      firstMissing(needsOption, needsProbe(suite)),
      async () => {
        const live = probe as Probe<P>;
        const base = await fixture.create();
        await live.write(await fixture.namespace(base, "tenant-one", "notes"), MARKERS[2]);
        const again = await fixture.namespace(base, "tenant-one", "notes");
        expect(await live.sees(again, MARKERS[2]), "the same namespace and label, opened again").toBe(true);
      },
    );

    check(
      suite,
      "a namespaced provider does not see the factory provider's block of the same label",
      firstMissing(needsOption, needsProbe(suite)),
      async () => {
        const live = probe as Probe<P>;
        const base = await fixture.create();
        await initialize(base, "notes");
        await live.write(base, MARKERS[3]);
        const namespaced = await fixture.namespace(base, "tenant-one", "notes");
        expect(await live.sees(namespaced, MARKERS[3]), "a namespace sees the base provider's block").toBe(
          false,
        );
      },
    );
  });
}
