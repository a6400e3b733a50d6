import { expect, it } from "vitest";
import * as entry from "../src/index.js";

// workerd treats every named export of a Worker's main module as an entrypoint (a Durable Object class, a
// WorkerEntrypoint): `wrangler dev` refused to start while index.ts exported a number (MAX_BODY_BYTES). The
// test pool wraps the module and does not check this, so it is checked here.
it("exports from its main module only the handler and classes workerd can serve", () => {
  const notServable = Object.entries(entry)
    .filter(([name, value]) => name !== "default" && typeof value !== "function")
    .map(([name]) => name);
  expect(notServable).toEqual([]);
});
