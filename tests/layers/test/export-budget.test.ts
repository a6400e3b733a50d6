import { describe, expect, it } from "vitest";
import { applicationBudget, audiences, countEntries } from "../src/export-budget.js";
import { entryFile, importClosure, workspacePackages } from "../src/import-closure.js";

const packages = workspacePackages();
const counted = countEntries(packages);

describe("every public entry has an audience", () => {
  it.each(counted.map(({ entry }) => entry))("%s", (entry) => {
    expect(audiences[entry], `${entry} is not classified (tests/layers/src/export-budget.ts)`).toBeDefined();
  });

  it("every classified entry exists", () => {
    const existing = new Set(counted.map(({ entry }) => entry));
    expect(Object.keys(audiences).filter((entry) => !existing.has(entry))).toEqual([]);
  });
});

describe("the entries applications import", () => {
  const applications = counted.filter(({ entry }) => audiences[entry] === "application");
  const total = applications.reduce((sum, { names }) => sum + names.length, 0);

  it(`export at most ${applicationBudget} names together`, () => {
    const table = applications.map(({ entry, names }) => `  ${entry.padEnd(40)} ${names.length}`).join("\n");
    console.log(`Exported names of the application entries:\n${table}\n  ${"total".padEnd(40)} ${total}`);
    expect(total, "over the export budget (see the table above)").toBeLessThanOrEqual(applicationBudget);
  });

  it("no test helper, backend-author kit or schema is an application entry", () => {
    const misplaced = applications
      .map(({ entry }) => entry)
      .filter((entry) => /\/(test|store-kit|schema)$/.test(entry));
    expect(misplaced).toEqual([]);
  });
});

describe("no published entry ships a test runner", () => {
  // Starting a server (initdb, wrangler) is what tests do; the private @contextblocks/test-kit does it.
  const entries = [...packages].flatMap(([name, pkg]) =>
    Object.keys(pkg.manifest.exports ?? {})
      .filter((subpath) => entryFile(pkg, subpath) !== null)
      .map((subpath) => ({ label: `${name} ${subpath}`, pkg, subpath })),
  );
  it.each(entries)("$label", ({ pkg, subpath }) => {
    expect([...importClosure(packages, pkg, subpath)]).not.toContain("node:child_process");
  });
});
