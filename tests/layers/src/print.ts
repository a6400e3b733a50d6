import { importClosure, workspacePackages } from "./import-closure.js";

/** Prints each package's main-entry import closure as a Markdown table (for notes and the README). */
const packages = workspacePackages();
console.log("| package | main entry reaches |\n| --- | --- |");
for (const [name, pkg] of [...packages].sort(([left], [right]) => left.localeCompare(right))) {
  const reached = [...importClosure(packages, pkg)].sort();
  console.log(`| ${name} | ${reached.length === 0 ? "nothing" : reached.join(", ")} |`);
}
