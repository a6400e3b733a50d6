import type { ContextProvider } from "@contextblocks/core";
import { expect } from "vitest";
import { initialize } from "./fixture.js";
import { MARKERS, needsProbe, type Probe, probeFor } from "./probe.js";
import { check, firstMissing, group, type Suite } from "./suite.js";

/** Where a block lives: the factory provider's own namespace (`null`) or a named one, and its label. */
export interface BlockAddress {
  namespace: string | null;
  label: string;
}

/** Two addresses that must be two blocks, though a provider joining namespace and label into one key confuses them. */
export interface AmbiguousJoin {
  name: string;
  addresses: readonly [BlockAddress, BlockAddress];
}

/** Characters a provider might join a namespace and a label with. */
export const JOIN_SEPARATORS = [":", "::", "/", "\\", ".", "_", "-", "|", "#", " ", "\u0000"] as const;

/** Every family of ambiguous joins the namespacing group checks, by check title. */
export const AMBIGUOUS_JOINS: Readonly<Record<string, readonly AmbiguousJoin[]>> = {
  "a label holding a separator is not the block of the namespace it names": JOIN_SEPARATORS.map(
    (separator) => ({
      name: `label "tenant${separator}notes" without a namespace, and namespace "tenant" with label "notes"`,
      addresses: [
        { namespace: null, label: `tenant${separator}notes` },
        { namespace: "tenant", label: "notes" },
      ],
    }),
  ),
  "a separator moved between the namespace and the label gives another block": JOIN_SEPARATORS.map(
    (separator) => ({
      name: `namespace "tenant${separator}team" with label "notes", and namespace "tenant" with label "team${separator}notes"`,
      addresses: [
        { namespace: `tenant${separator}team`, label: "notes" },
        { namespace: "tenant", label: `team${separator}notes` },
      ],
    }),
  ),
  "namespaces that share a prefix or concatenate to the same text are separate": [
    {
      name: 'namespace "tenant" with label "notes", and namespace "tenantn" with label "otes" (plain concatenation)',
      addresses: [
        { namespace: "tenant", label: "notes" },
        { namespace: "tenantn", label: "otes" },
      ],
    },
    {
      name: 'namespace "tenant" and namespace "tenant-archive", both with label "notes" (a prefix match)',
      addresses: [
        { namespace: "tenant", label: "notes" },
        { namespace: "tenant-archive", label: "notes" },
      ],
    },
    {
      name: 'namespace "tenant%" and namespace "tenant_", both with label "notes" (LIKE wildcards)',
      addresses: [
        { namespace: "tenant%", label: "notes" },
        { namespace: "tenant_", label: "notes" },
      ],
    },
  ],
  "the empty namespace and namespaces ending in a separator do not join ambiguously": [
    {
      name: 'namespace "" with label "tenant:notes", and namespace "tenant" with label "notes"',
      addresses: [
        { namespace: "", label: "tenant:notes" },
        { namespace: "tenant", label: "notes" },
      ],
    },
    {
      name: 'namespace "" with label "tenant/notes", and namespace "tenant" with label "notes"',
      addresses: [
        { namespace: "", label: "tenant/notes" },
        { namespace: "tenant", label: "notes" },
      ],
    },
    {
      name: 'namespace "tenant:" with label "notes", and namespace "tenant" with label ":notes"',
      addresses: [
        { namespace: "tenant:", label: "notes" },
        { namespace: "tenant", label: ":notes" },
      ],
    },
    {
      name: 'namespace ":" with label "notes", and namespace "" with label "::notes"',
      addresses: [
        { namespace: ":", label: "notes" },
        { namespace: "", label: "::notes" },
      ],
    },
  ],
};

function describeAddress(address: BlockAddress): string {
  const where =
    address.namespace === null ? "the factory provider" : `namespace ${JSON.stringify(address.namespace)}`;
  return `${where}, label ${JSON.stringify(address.label)}`;
}

/**
 * Namespacing: one backing store, several namespaces (tenants, agents, table prefixes); the same label in
 * two namespaces is two blocks.
 */
export function namespacingGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const probe = probeFor(suite);
  const needsOption = suite.options.namespace ? null : "needs the namespace option";

  group("namespacing", suite, suite.declared.namespacing, (fixture) => {
    /**
     * Writes a different marker at each address of `join` (on one fresh backing store) and expects each
     * address to see its own marker only. A provider may refuse a namespace or label it cannot store
     * unambiguously (it throws when opened, initialised or written): that pair is then not checked.
     */
    async function expectSeparate(join: AmbiguousJoin): Promise<void> {
      const live = probe as Probe<P>;
      const base = await fixture.create();
      const opened: P[] = [];
      for (const [index, address] of join.addresses.entries()) {
        try {
          let provider = base;
          if (address.namespace === null) await initialize(base, address.label);
          else provider = await fixture.namespace(base, address.namespace, address.label);
          await live.write(provider, MARKERS[index] as string);
          opened.push(provider);
        } catch {
          return;
        }
      }
      for (const [index, provider] of opened.entries()) {
        const own = MARKERS[index] as string;
        const other = MARKERS[1 - index] as string;
        const here = describeAddress(join.addresses[index] as BlockAddress);
        const there = describeAddress(join.addresses[1 - index] as BlockAddress);
        expect(await live.sees(provider, own), `${here} does not see its own block (${join.name})`).toBe(
          true,
        );
        expect(await live.sees(provider, other), `${here} sees the block of ${there}: one stored key`).toBe(
          false,
        );
      }
    }

    for (const [title, joins] of Object.entries(AMBIGUOUS_JOINS)) {
      check(suite, title, firstMissing(needsOption, needsProbe(suite)), async () => {
        for (const join of joins) await expectSeparate(join);
      });
    }

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
