import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { extractSnippets, type Snippet, snippetModule } from "../src/extract.js";

// Every fenced TypeScript block of every README is compiled (and, when marked `run`, run in Node) against
// the built packages, so the examples cannot drift from the code. Markers: src/extract.ts and the root
// README's "Working on this repository".

// tsx registered by absolute URL: the snippet runs in a scratch directory that has no node_modules.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const OUT = fileURLToPath(new URL("../.snippets/", import.meta.url));

function readmes(): string[] {
  const found = ["README.md"];
  for (const folder of ["packages", "examples", "tests"]) {
    for (const name of readdirSync(join(ROOT, folder)).sort()) {
      if (existsSync(join(ROOT, folder, name, "README.md"))) found.push(`${folder}/${name}/README.md`);
    }
  }
  if (existsSync(join(ROOT, "bench/README.md"))) found.push("bench/README.md");
  return found;
}

const snippets: Snippet[] = readmes().flatMap((readme) =>
  extractSnippets(readme, readFileSync(join(ROOT, readme), "utf8")),
);
const fileOf = new Map<Snippet, string>();
const diagnostics = new Map<string, string[]>();

function compile(files: string[], types: string[], lib: string[]): void {
  if (files.length === 0) return;
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    lib,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types,
  });
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? "";
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? `line ${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `
        : "";
    const list = diagnostics.get(file) ?? [];
    list.push(`${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
    diagnostics.set(file, list);
  }
}

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const counts = new Map<string, number>();
  for (const snippet of snippets) {
    if (snippet.mode === "skip") continue;
    const slug = snippet.readme.replace(/\/?README\.md$/, "").replaceAll("/", "-") || "root";
    const count = (counts.get(slug) ?? 0) + 1;
    counts.set(slug, count);
    const file = join(OUT, `${slug}-${count}-line-${snippet.line}.ts`);
    writeFileSync(file, snippetModule(snippet));
    fileOf.set(snippet, file);
  }
  const byMode = (worker: boolean) =>
    [...fileOf].filter(([snippet]) => (snippet.mode === "compile-worker") === worker).map(([, file]) => file);
  // Node projects usually have the DOM lib too (fetch's Request and Response); workerd has its own types.
  compile(byMode(false), ["node"], ["lib.es2022.d.ts", "lib.dom.d.ts"]);
  compile(byMode(true), ["@cloudflare/workers-types"], ["lib.es2022.d.ts"]);
}, 120_000);

it("finds the TypeScript blocks of the READMEs", () => {
  expect(snippets.length).toBeGreaterThan(10);
});

for (const readme of readmes()) {
  const own = snippets.filter((snippet) => snippet.readme === readme);
  if (own.length === 0) continue;
  describe(readme, () => {
    for (const snippet of own) {
      const title = `block at line ${snippet.line} (${snippet.mode}${snippet.reason ? `: ${snippet.reason}` : ""})`;
      if (snippet.mode === "skip") {
        it.skip(title, () => {});
        continue;
      }
      it(title, () => {
        const file = fileOf.get(snippet) as string;
        const errors = diagnostics.get(file) ?? [];
        expect(
          errors,
          `${readme}:${snippet.line} does not compile (${relative(ROOT, file)}):\n${errors.join("\n")}\n\n` +
            "Fix the block, or mark it (see the root README, 'README code blocks').",
        ).toEqual([]);
        if (snippet.mode !== "run") return;
        const cwd = mkdtempSync(join(tmpdir(), "readme-run-"));
        try {
          const child = spawnSync(process.execPath, ["--import", TSX, file], {
            cwd,
            encoding: "utf8",
            timeout: 60_000,
          });
          expect(
            child.status,
            `${readme}:${snippet.line} failed when run:\n${child.stdout}\n${child.stderr}`,
          ).toBe(0);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      }, 90_000);
    }
  });
}

describe("published READMEs link nothing that dies on npm", () => {
  for (const name of readdirSync(join(ROOT, "packages")).sort()) {
    const readme = `packages/${name}/README.md`;
    if (!existsSync(join(ROOT, readme))) continue;
    it(readme, () => {
      const text = readFileSync(join(ROOT, readme), "utf8");
      const relativeLinks = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1] as string)
        .filter((target) => !/^(https?:|mailto:|#)/.test(target));
      expect(relativeLinks, "use absolute https://github.com/contextblocks/contextblocks/… links").toEqual(
        [],
      );
    });
  }
});
