import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { ADVERSARIAL_TEXTS, HOSTILE_QUERIES } from "@contextblocks/conformance";
import { runWithinDeadline } from "@contextblocks/conformance/node";
import { it } from "vitest";

// The linear-time guard (issue 12) for the FTS5 provider: every adversarial text and hostile query is
// written and searched in a worker thread that is terminated if one call hangs (a backtracking tokenizer
// or query-planning regex), so a regression fails here instead of hanging CI.
it("writes and searches every adversarial text and hostile query without hanging", async () => {
  await runWithinDeadline({
    moduleUrl: new URL("./linear-targets.ts", import.meta.url).href,
    exportName: "writeAndSearch",
    calls: [
      ...ADVERSARIAL_TEXTS.map((entry) => ({ name: entry.name, args: [entry.text] })),
      ...HOSTILE_QUERIES.map((hostile) => ({ name: `query: ${hostile.name}`, args: [hostile.query] })),
    ],
    loaderUrl: pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api")).href,
  });
}, 300_000);
