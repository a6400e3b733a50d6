import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describeContextProvider } from "@contextblocks/conformance";
import { JsonFileContextProvider } from "../src/index.js";

// A fresh store per call: a new temporary directory with its own file.
async function freshProvider(): Promise<JsonFileContextProvider> {
  const directory = await mkdtemp(join(tmpdir(), "contextblocks-json-"));
  return new JsonFileContextProvider({ path: join(directory, "context.json") });
}

describeContextProvider("JsonFileContextProvider", freshProvider, {
  capabilities: { writable: true },
  // A new instance on the same file: a restart, as far as the provider can tell.
  reopen: (provider) => new JsonFileContextProvider({ path: provider.path }),
  cleanup: (provider) => rm(dirname(provider.path), { recursive: true, force: true }),
});
