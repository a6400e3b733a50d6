import { join } from "node:path";
import ts from "typescript";
import type { WorkspacePackage } from "./import-closure.js";

/**
 * Who each public entry is for (DESIGN: "A surface per audience"). Applications import the budgeted
 * entries; authors of backends import a package's `store-kit`; tests import `/test`. The conformance suite
 * and the agents drop-in (whose names are Cloudflare agents') are outside the budget. Every entry of every
 * published package is listed here, so a new entry must be classified before the budget test passes.
 */
export type Audience = "application" | "store-kit" | "test" | "conformance" | "agents drop-in";

export const audiences: Readonly<Record<string, Audience>> = {
  "@contextblocks/agents": "agents drop-in",
  "@contextblocks/agents/experimental/memory/session": "agents drop-in",
  "@contextblocks/agents/experimental/memory/utils": "agents drop-in",
  "@contextblocks/ai": "application",
  "@contextblocks/ai/test": "test",
  "@contextblocks/conformance": "conformance",
  "@contextblocks/conformance/node": "conformance",
  "@contextblocks/core": "application",
  "@contextblocks/core/memory": "application",
  "@contextblocks/core/store-kit": "store-kit",
  "@contextblocks/fts5": "application",
  "@contextblocks/inspector": "application",
  "@contextblocks/otel": "application",
  "@contextblocks/postgres": "application",
  "@contextblocks/postgres/store-kit": "store-kit",
  "@contextblocks/r2": "application",
  "@contextblocks/r2/import": "application",
  "@contextblocks/sessions": "application",
  "@contextblocks/sessions/compaction": "application",
  "@contextblocks/sessions/memory": "application",
  "@contextblocks/sessions/store-kit": "store-kit",
  "@contextblocks/sql": "application",
  "@contextblocks/sql/store-kit": "store-kit",
  // The stores written once over SqlClient: what the SQLite and Postgres backends are built from.
  "@contextblocks/sql-stores": "store-kit",
  "@contextblocks/sqlite": "application",
  "@contextblocks/sqlite/store-kit": "store-kit",
  // Tokenizer, stemmer and query planning the search backends share.
  "@contextblocks/text": "store-kit",
};

/** The most names (values and types alike) the application entries may export together. */
export const applicationBudget = 250;

/** `@contextblocks/core` + `"./memory"` → `@contextblocks/core/memory`. */
export function entryName(packageName: string, subpath: string): string {
  return subpath === "." ? packageName : `${packageName}${subpath.slice(1)}`;
}

/** The entries of a package that have type declarations (not `./package.json` or `./schema.sql`). */
export function typedEntries(pkg: WorkspacePackage): { subpath: string; types: string }[] {
  const entries: { subpath: string; types: string }[] = [];
  for (const [subpath, target] of Object.entries(pkg.manifest.exports ?? {})) {
    const types = typeof target === "string" ? undefined : target.types;
    if (types?.endsWith(".d.ts")) entries.push({ subpath, types });
  }
  return entries;
}

/** An entry of a published package with the names (values and types) its built `.d.ts` exports. */
export interface CountedEntry {
  entry: string;
  names: string[];
}

/** Every typed entry of the given packages with its exported names, read by one TypeScript program. */
export function countEntries(packages: ReadonlyMap<string, WorkspacePackage>): CountedEntry[] {
  const files = [...packages].flatMap(([name, pkg]) =>
    typedEntries(pkg).map(({ subpath, types }) => ({
      entry: entryName(name, subpath),
      file: join(pkg.folder, types),
    })),
  );
  const program = ts.createProgram(
    files.map(({ file }) => file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  return files.map(({ entry, file }) => {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${file} is not built: run pnpm turbo run build first`);
    const symbol = checker.getSymbolAtLocation(source);
    const names =
      symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((exported) => exported.name);
    return { entry, names };
  });
}
