import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { describe, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../conformance/src/adversarial.js";
import { runWithinDeadline } from "../../conformance/src/deadline.js";

/**
 * The linear-time guard (issue 12): every adversarial text goes through each path of core that reads text,
 * in a worker thread that is terminated if one call does not return within a generous deadline. The old
 * structure rule needed 2^40 steps for "40 BOMs and no rule", so it fails here instead of hanging CI.
 */
const targets = ["structureRule", "renderAndParse", "describeBlock", "keysTokensAndSearch"];
const loaderUrl = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api")).href;
const calls = ADVERSARIAL_TEXTS.map((entry) => ({ name: entry.name, args: [entry.text] }));

describe("linear-time guard: core on the adversarial corpus", () => {
  it.each(targets)(
    "%s returns on every adversarial text",
    async (exportName) => {
      await runWithinDeadline({
        moduleUrl: new URL("./linear-targets.ts", import.meta.url).href,
        exportName,
        calls,
        loaderUrl,
      });
    },
    180_000,
  );
});
