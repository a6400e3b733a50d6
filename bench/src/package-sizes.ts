/**
 * Package and Worker bundle sizes, as the pack check (`pnpm pack-check`, tests/pack) measured them from
 * the packed tarballs: it writes bench/out/package-sizes.json. This section reads that file; without it,
 * it prints a one-line notice (run `pnpm pack-check` first, as `pnpm verify` does).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface PackageSizes {
  measured: string;
  packages: { name: string; tarballBytes: number; unpackedBytes: number; files: number }[];
  bundles: { name: string; bytes: number; gzipBytes: number; wranglerTotal: string }[];
}

const SIZES = fileURLToPath(new URL("../out/package-sizes.json", import.meta.url));

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

export async function run(): Promise<string> {
  if (!existsSync(SIZES)) {
    return "No sizes: bench/out/package-sizes.json is missing; run `pnpm pack-check` first (`pnpm verify` does).";
  }
  const sizes = JSON.parse(readFileSync(SIZES, "utf8")) as PackageSizes;
  const lines = [
    `Measured by the pack check at ${sizes.measured}.`,
    "",
    "| package | tarball | unpacked | files |",
    "| --- | ---: | ---: | ---: |",
    ...sizes.packages.map(
      (item) =>
        `| @contextblocks/${item.name} | ${kib(item.tarballBytes)} | ${kib(item.unpackedBytes)} | ${item.files} |`,
    ),
    "",
    "| Worker bundle (wrangler deploy --dry-run, not minified) | size | gzip | wrangler's Total Upload |",
    "| --- | ---: | ---: | --- |",
    ...sizes.bundles.map(
      (bundle) =>
        `| ${bundle.name} | ${kib(bundle.bytes)} | ${kib(bundle.gzipBytes)} | ${bundle.wranglerTotal} |`,
    ),
  ];
  return lines.join("\n");
}
