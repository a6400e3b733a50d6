import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

// Used by scripts/run-upstream-tests.mjs, which copies cloudflare/agents' test files into
// UPSTREAM_TESTS_DIRECTORY (outside this repository) and writes the worker and wrangler.json beside them.
const directory = process.env.UPSTREAM_TESTS_DIRECTORY;
if (directory === undefined) {
  throw new Error("upstream.vitest.config.ts: run it through scripts/run-upstream-tests.mjs");
}
const packageDirectory = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");

/**
 * agents@0.22.0's package root (its `Agent` class) imports its MCP peers (`@modelcontextprotocol/client`,
 * `/server`, `/sdk`), which are not installed here and which no Sessions API test calls. Each stands in as a
 * module whose names (found in agents' own imports) are empty classes.
 */
function mcpStandIns(agentsDirectory: string): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  const importPattern = /import \{([^}]*)\} from "(@modelcontextprotocol\/[^"]+)"/g;
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".js")) {
        for (const match of readFileSync(path, "utf8").matchAll(importPattern)) {
          const specifier = match[2] as string;
          const set = names.get(specifier) ?? new Set<string>();
          for (const part of (match[1] as string).split(",")) {
            const name = part.trim().split(/\s+as\s+/)[0];
            if (name) set.add(name);
          }
          names.set(specifier, set);
        }
      }
    }
  };
  walk(join(agentsDirectory, "dist"));
  return names;
}

/**
 * The copies import `@contextblocks/agents/...` and `agents-session/...`, which do not resolve from a temporary
 * directory: resolve them as this package's own files would.
 */
function fromThisPackage(): Plugin {
  const importer = join(packageDirectory, "src", "index.ts");
  const require = createRequire(importer);
  const agentsDirectory = join(packageDirectory, "node_modules", "agents-session");
  const standIns = mcpStandIns(agentsDirectory);
  const standInPrefix = "\0agents-mcp-stand-in:";
  return {
    name: "contextblocks-upstream-resolve",
    enforce: "pre",
    async resolveId(specifier, _from, options) {
      if (specifier.startsWith("@contextblocks/agents/")) {
        const file = specifier.endsWith("/utils") ? "utils.js" : "index.js";
        return join(packageDirectory, "dist", file);
      }
      if (specifier === "agents-session" || specifier.startsWith("agents-session/")) {
        const resolved = await this.resolve(specifier, importer, { ...options, skipSelf: true });
        return resolved ?? require.resolve(specifier);
      }
      if (standIns.has(specifier)) return `${standInPrefix}${specifier}`;
      return null;
    },
    load(id) {
      if (!id.startsWith(standInPrefix)) return null;
      return [...(standIns.get(id.slice(standInPrefix.length)) ?? [])]
        .map((name) => `export class ${name} {}`)
        .join("\n");
    },
  };
}

export default defineConfig({
  plugins: [
    fromThisPackage(),
    cloudflareTest({ wrangler: { configPath: join(directory, "wrangler.json") } }),
  ],
  test: {
    dir: directory,
    include: ["src/tests/**/*.test.ts"],
  },
});
