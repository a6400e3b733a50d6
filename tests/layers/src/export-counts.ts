import { join } from "node:path";
import ts from "typescript";
import { workspacePackages } from "./import-closure.js";

/** Prints the number of exported names (values and types) of every entry of every package. */
const packages = workspacePackages();
console.log("| entry | exported names |\n| --- | --- |");
for (const [name, pkg] of [...packages].sort(([left], [right]) => left.localeCompare(right))) {
  for (const [subpath, target] of Object.entries(pkg.manifest.exports ?? {})) {
    const types = typeof target === "string" ? undefined : target.types;
    if (types === undefined || !types.endsWith(".d.ts")) continue;
    const file = join(pkg.folder, types);
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(file);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    const count = symbol === undefined ? 0 : checker.getExportsOfModule(symbol).length;
    console.log(`| ${name}${subpath === "." ? "" : subpath.slice(1)} | ${count} |`);
  }
}
