import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * The import graph of the built packages, read from their `dist` files: what a user's bundler or Node
 * loads when it imports an entry. Only static `import`/`export … from` and literal `import()` count; tsc
 * emits nothing else.
 */

export const packagesFolder = resolve(import.meta.dirname, "../../../packages");

export interface PackageManifest {
  name: string;
  private?: boolean;
  exports?: Record<string, string | { types?: string; default?: string }>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface WorkspacePackage {
  folder: string;
  manifest: PackageManifest;
}

/** Every published package of the workspace, by name. */
export function workspacePackages(): Map<string, WorkspacePackage> {
  const found = new Map<string, WorkspacePackage>();
  for (const entry of readdirSync(packagesFolder, { withFileTypes: true })) {
    const manifestPath = join(packagesFolder, entry.name, "package.json");
    if (!entry.isDirectory() || !existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as PackageManifest;
    if (manifest.private) continue;
    found.set(manifest.name, { folder: join(packagesFolder, entry.name), manifest });
  }
  return found;
}

/** The JavaScript file an export subpath (`"."`, `"./memory"`) points at, or `null` when it has none. */
export function entryFile(pkg: WorkspacePackage, subpath: string): string | null {
  const target = pkg.manifest.exports?.[subpath];
  const file = typeof target === "string" ? target : target?.default;
  if (file === undefined || !file.endsWith(".js")) return null;
  return join(pkg.folder, file);
}

const SPECIFIER =
  /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?[^"';]*?from\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)/g;

/** The specifiers a built file imports. */
export function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers: string[] = [];
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier !== undefined) specifiers.push(specifier);
  }
  return specifiers;
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`, `node:fs` → `node:fs`. */
export function packageNameOf(specifier: string): string {
  if (specifier.startsWith("node:")) return specifier;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

function subpathOf(specifier: string): string {
  const name = packageNameOf(specifier);
  return specifier === name ? "." : `.${specifier.slice(name.length)}`;
}

/**
 * Every package an entry reaches, transitively through workspace packages (their entries are walked too);
 * packages outside the workspace (`ai`, `zod`, `pg`, `node:*`) are listed, not walked.
 */
export function importClosure(
  packages: ReadonlyMap<string, WorkspacePackage>,
  start: WorkspacePackage,
  subpath = ".",
): Set<string> {
  const reached = new Set<string>();
  const seenFiles = new Set<string>();
  const first = entryFile(start, subpath);
  if (first === null) throw new Error(`${start.manifest.name} has no built entry for "${subpath}"`);
  const pending = [first];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seenFiles.has(file)) continue;
    seenFiles.add(file);
    if (!existsSync(file)) throw new Error(`${file} is not built: run pnpm build first`);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith(".")) {
        pending.push(resolve(dirname(file), specifier));
        continue;
      }
      const name = packageNameOf(specifier);
      const target = packages.get(name);
      if (target === undefined) {
        reached.add(name);
        continue;
      }
      if (target !== start) reached.add(name);
      const next = entryFile(target, subpathOf(specifier));
      if (next === null) throw new Error(`${specifier} (imported by ${file}) is not an export of ${name}`);
      pending.push(next);
    }
  }
  return reached;
}

/** The built files of a package (its `dist`), with their text. */
export function builtFiles(pkg: WorkspacePackage): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".js")) files.push({ path, text: readFileSync(path, "utf8") });
    }
  };
  const dist = join(pkg.folder, "dist");
  if (existsSync(dist)) walk(dist);
  return files;
}

/** The packages a package's own built files import directly (any entry), to compare with its manifest. */
export function directImports(pkg: WorkspacePackage): Set<string> {
  const names = new Set<string>();
  const dist = join(pkg.folder, "dist");
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".js")) {
        for (const specifier of importsOf(path)) {
          if (!specifier.startsWith(".")) names.add(packageNameOf(specifier));
        }
      }
    }
  };
  if (existsSync(dist)) walk(dist);
  names.delete(pkg.manifest.name);
  return names;
}
