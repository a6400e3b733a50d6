import type { ContextProvider } from "@contextblocks/core";
import { isSearchProvider, isSkillProvider, isWritableProvider } from "@contextblocks/core/store-kit";
import type { Suite } from "./suite.js";

/**
 * A kind-neutral way to put a recognisable piece of text into a provider's block and to ask whether a
 * provider can see it: the label and namespace checks run on every kind of provider with it.
 */
export interface Probe<P extends ContextProvider> {
  /** How the text goes in, for failure messages. */
  via: string;
  write(provider: P, marker: string): Promise<void>;
  sees(provider: P, marker: string): Promise<boolean>;
}

/** Words no test text contains, one per label or namespace in a check. */
export const MARKERS = [
  "quillback",
  "tamarack",
  "bergamot",
  "marzipan",
  "zephyrine",
  "ocelotl",
  "juniper",
  "saffron",
] as const;

export function probeText(marker: string): string {
  return `The probe word for this block is ${marker}.`;
}

function probeKey(marker: string): string {
  return `probe-${marker}`;
}

/** The probe for the declared kind, or `null` when the provider cannot be written to at all. */
export function probeFor<P extends ContextProvider>(suite: Suite<P>): Probe<P> | null {
  const { declared, kind, options } = suite;
  if (kind === "searchable" && declared.writable) {
    return {
      via: "set(key, content)",
      write: (provider, marker) =>
        isSearchProvider(provider) && provider.set
          ? provider.set(probeKey(marker), probeText(marker))
          : missing("set"),
      async sees(provider, marker) {
        if (!isSearchProvider(provider)) return missing("search");
        const found = await provider.search(marker);
        return typeof found === "string" && found.includes(marker);
      },
    };
  }
  if (kind === "loadable" && declared.writable) {
    return {
      via: "set(key, content, description)",
      write: (provider, marker) =>
        isSkillProvider(provider) && provider.set
          ? provider.set(probeKey(marker), probeText(marker), `probe ${marker}`)
          : missing("set"),
      async sees(provider, marker) {
        if (!isSkillProvider(provider)) return missing("load");
        const loaded = await provider.load(probeKey(marker));
        const listing = await provider.get();
        return loaded !== null || (typeof listing === "string" && listing.includes(marker));
      },
    };
  }
  if (kind === "writable") {
    return {
      via: "set(content)",
      write: (provider, marker) =>
        isWritableProvider(provider) ? provider.set(probeText(marker)) : missing("set"),
      sees: async (provider, marker) => includes(await provider.get(), marker),
    };
  }
  const seed = options.seed;
  if (seed && (kind === "readonly" || !declared.writable)) {
    return {
      via: "the seed option",
      write: async (provider, marker) => {
        await seed(provider, probeText(marker));
      },
      sees: async (provider, marker) => includes(await provider.get(), marker),
    };
  }
  return null;
}

/** Why a check that writes through the probe is skipped, or `null` when there is a probe. */
export function needsProbe<P extends ContextProvider>(suite: Suite<P>): string | null {
  return probeFor(suite) ? null : "needs a write method or the seed option";
}

function includes(value: string | null, marker: string): boolean {
  return typeof value === "string" && value.includes(marker);
}

function missing(method: string): Promise<never> {
  return Promise.reject(new TypeError(`the provider has no ${method}() method`));
}
