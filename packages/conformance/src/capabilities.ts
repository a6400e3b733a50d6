import type { ContextProvider } from "@contextblocks/core";
import { hasMethod } from "@contextblocks/core/store-kit";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderFixture } from "./fixture.js";
import type { DeclaredCapabilities } from "./options.js";
import type { Suite } from "./suite.js";

/** Each declarable capability and the method whose presence decides it (core's structural rule). */
export const CAPABILITY_METHODS = [
  { capability: "writable", method: "set" },
  { capability: "searchable", method: "search" },
  { capability: "loadable", method: "load" },
  { capability: "delete", method: "delete" },
  { capability: "versions", method: "versions" },
] as const satisfies readonly { capability: keyof DeclaredCapabilities; method: string }[];

/**
 * Capability declaration: what `options.capabilities` says matches what the provider's shape says, so
 * the groups that run (or are skipped) are the right ones, and `ContextBlocks` gives the block the
 * behaviour and tools the author expects.
 */
export function capabilityGroup<P extends ContextProvider>(suite: Suite<P>): void {
  describe("capability declaration", () => {
    const fixture = new ProviderFixture(suite.factory, suite.options);
    afterEach(() => fixture.release());
    const timeout = suite.options.timeout;

    it(
      "the provider has a function-valued get()",
      async () => {
        const provider = await fixture.create();
        expect(
          hasMethod(provider, "get"),
          "every provider needs get(); ContextBlocks rejects one without",
        ).toBe(true);
      },
      timeout,
    );

    for (const { capability, method } of CAPABILITY_METHODS) {
      const declared = suite.declared[capability];
      it(
        `"${capability}: ${declared}" matches the shape: ${method}() is ${declared ? "" : "not "}a function`,
        async () => {
          const provider = await fixture.create();
          const present = hasMethod(provider, method);
          expect(
            present,
            declared
              ? `declared ${capability}: true, but the provider has no function-valued ${method}()`
              : `the provider has ${method}(), so ContextBlocks treats it as ${capability}; declare ${capability}: true`,
          ).toBe(declared);
        },
        timeout,
      );
    }

    it(`"namespacing: ${suite.declared.namespacing}" matches the namespace option`, () => {
      const option = typeof suite.options.namespace === "function";
      expect(
        option,
        suite.declared.namespacing
          ? "declared namespacing: true, but options.namespace(provider, namespace) is missing"
          : "options.namespace is given, but capabilities.namespacing is not declared",
      ).toBe(suite.declared.namespacing);
    });

    it("versions come with a set: a whole-block set (writable), or a keyed set of a loadable block", () => {
      expect(
        !suite.declared.versions ||
          suite.kind === "writable" ||
          (suite.kind === "loadable" && suite.declared.writable),
        "versions(query) lists versions of a whole-block set(content) or of a loadable block's set(key, …); declare writable (and loadable for entries, never searchable)",
      ).toBe(true);
    });

    it("keyed capabilities come with a kind: delete needs searchable or loadable", () => {
      expect(
        !suite.declared.delete || suite.declared.searchable || suite.declared.loadable,
        "delete(key) removes keyed entries; declare searchable or loadable too",
      ).toBe(true);
    });
  });
}
