import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The source files of the processes the scenarios start, and what they import from here. */
const processSources = [
  "sqlite-writer.ts",
  "subscriber-process.ts",
  "batches.ts",
  "turns.ts",
  "writer-protocol.ts",
  "writer-script.ts",
];

let output: URL | undefined;

/**
 * A process's script compiled to JavaScript (once per process, beside the package's dependencies so its
 * imports resolve): each process then starts with plain `node`, about a second sooner on a loaded machine
 * than through a TypeScript loader, which adds up when hundreds are started and killed.
 */
export function compiledProcess(file: "sqlite-writer.ts" | "subscriber-process.ts"): string {
  output ??= compile();
  return fileURLToPath(new URL(file.replace(/\.ts$/, ".js"), output));
}

function compile(): URL {
  const directory = new URL("../node_modules/.cache/contextblocks-faults/", import.meta.url);
  mkdirSync(directory, { recursive: true });
  write(new URL("package.json", directory), '{ "type": "module" }\n');
  for (const file of processSources) {
    const source = readFileSync(new URL(file, import.meta.url), "utf8");
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
      fileName: file,
    });
    write(new URL(file.replace(/\.ts$/, ".js"), directory), outputText);
  }
  return directory;
}

/** Written beside, then renamed: test files running at once never start a half-written script. */
function write(target: URL, text: string): void {
  const temporary = `${fileURLToPath(target)}.${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, target);
}
