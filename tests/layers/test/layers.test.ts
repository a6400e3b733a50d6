import { describe, expect, it } from "vitest";
import {
  builtFiles,
  directImports,
  entryFile,
  importClosure,
  workspacePackages,
} from "../src/import-closure.js";
import { backends, layers } from "../src/layers.js";

const packages = workspacePackages();

describe("every package has a layer", () => {
  it.each([...packages.keys()])("%s", (name) => {
    expect(layers[name], `${name} is not placed in a layer (tests/layers/src/layers.ts)`).toBeDefined();
  });
});

describe("the main entry reaches only the layers below it", () => {
  it.each([...packages.keys()].filter((name) => layers[name] !== undefined))("%s", (name) => {
    const reached = [...importClosure(packages, packages.get(name)!)].sort();
    const allowed = new Set(layers[name]!.mayReach);
    expect(reached.filter((reachedName) => !allowed.has(reachedName))).toEqual([]);
  });
});

describe("no backend entry reaches another backend, ai or zod", () => {
  const forbidden = new Set<string>([...backends, "ai", "zod"]);
  for (const name of backends) {
    const pkg = packages.get(name);
    if (pkg === undefined) continue;
    const subpaths = Object.keys(pkg.manifest.exports ?? {}).filter(
      (subpath) => entryFile(pkg, subpath) !== null,
    );
    it.each(subpaths)(`${name} %s`, (subpath) => {
      const reached = importClosure(packages, pkg, subpath);
      expect(
        [...reached].filter((reachedName) => forbidden.has(reachedName) && reachedName !== name),
      ).toEqual([]);
    });
  }
});

describe("every package a package imports is in its manifest", () => {
  it.each([...packages.keys()])("%s", (name) => {
    const pkg = packages.get(name)!;
    const declared = new Set([
      ...Object.keys(pkg.manifest.dependencies ?? {}),
      ...Object.keys(pkg.manifest.peerDependencies ?? {}),
    ]);
    const undeclared = [...directImports(pkg)].filter(
      (imported) => !imported.startsWith("node:") && !declared.has(imported),
    );
    expect(undeclared).toEqual([]);
  });
});

/**
 * Under `@cloudflare/vitest-pool-workers` an `import()` made inside a Durable Object's request can stay
 * pending for good (cloudflare/workers-sdk#5387): a store that awaited one once left a user's object
 * unavailable until its isolate went. Code that runs in a Worker loads its modules statically; the
 * conformance suite, which runs in the test runner and loads what it is told to, is the exception.
 */
describe("no package that runs in a Worker loads a module with import()", () => {
  const dynamicImport = /(?<![\w$.])import\s*\(/;
  it.each([...packages.keys()].filter((name) => name !== "@contextblocks/conformance"))("%s", (name) => {
    const loading = builtFiles(packages.get(name)!)
      .filter((file) => dynamicImport.test(file.text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "")))
      .map((file) => file.path);
    expect(loading).toEqual([]);
  });
});
