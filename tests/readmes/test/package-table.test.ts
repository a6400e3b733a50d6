import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const SCOPE = "@contextblocks/";

/** The root README's package table: the folder each row links and its "runtime dependencies" cell. */
function tableRows(): Array<{ folder: string; cell: string }> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const rows: Array<{ folder: string; cell: string }> = [];
  for (const line of readme.split("\n")) {
    const match = /^\| \[`@contextblocks\/[^`]+`\]\((packages\/[^)]+)\) \|.*\| ([^|]+) \|$/.exec(line);
    if (match?.[1] && match[2]) rows.push({ folder: match[1], cell: match[2].trim() });
  }
  return rows;
}

/** A name as the table writes it (`core`, `` `ai` ``, `` `@opentelemetry/api` ``) as the manifest does. */
function manifestName(word: string, peer: boolean): string {
  const name = word.replace(/`/g, "").trim();
  if (name.startsWith("@")) return name;
  // A plain word is one of ours, except the third-party peers the table quotes (`ai`, `zod`, `vitest`).
  const quoted = word.includes("`");
  return (peer && quoted) || name === "vitest" ? name : `${SCOPE}${name}`;
}

/** What the cell claims: "core, sql; peers `ai`, `zod`", "none", "peers core, sessions, vitest". */
function claimed(cell: string): { dependencies: string[]; peers: string[] } {
  const dependencies: string[] = [];
  const peers: string[] = [];
  for (const part of cell.split(";").map((text) => text.trim())) {
    if (part === "none" || part === "") continue;
    const peer = /^(optional )?peers? /.exec(part);
    const list = peer ? part.slice(peer[0].length) : part;
    for (const word of list.split(",")) (peer ? peers : dependencies).push(manifestName(word, peer !== null));
  }
  return { dependencies: dependencies.sort(), peers: peers.sort() };
}

describe("the root README's package table", () => {
  const rows = tableRows();

  it("lists every package", () => {
    expect(rows.length).toBeGreaterThanOrEqual(14);
  });

  it.each(rows.map((row) => [row.folder, row] as const))(
    "%s: its runtime dependencies are the manifest's",
    (_, row) => {
      const manifest = JSON.parse(readFileSync(join(ROOT, row.folder, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      const ours = Object.keys(manifest.dependencies ?? {})
        .filter((name) => name.startsWith(SCOPE))
        .sort();
      const peers = Object.keys(manifest.peerDependencies ?? {}).sort();
      expect(claimed(row.cell)).toEqual({ dependencies: ours, peers });
    },
  );
});
