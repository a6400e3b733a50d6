/**
 * The pack check: what a user gets from npm, checked as a user would. For every published package:
 * `pnpm pack`, then in the tarball: LICENSE and the manifest fields, every source map's sources resolve
 * inside the tarball, `publint --strict`, `attw --profile esm-only`. Then a project outside the workspace
 * installs the tarballs with plain npm, typechecks user code (strict, `module: nodenext`), runs the root
 * README's Node example, runs the conformance suite from its tarball on the SQLite providers, and bundles
 * two Workers with `wrangler deploy --dry-run` (core + sqlite, and + fts5) to report their sizes.
 *
 *   pnpm pack-check                 # from the repository root (after `pnpm build`)
 *   PACK_CHECK_KEEP=1 pnpm pack-check   # keep the scratch directory to look at
 *
 * Needs the npm registry (the smoke project's third-party dependencies), nothing else. Sizes are written
 * to bench/out/package-sizes.json for the benchmark report.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { extractSnippets, snippetModule } from "../../readmes/src/extract.js";
import {
  freePort,
  quickStartFiles,
  quickStartTurns,
  rootReadme,
  startWranglerDev,
  writeQuickStart,
} from "./quick-start.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const HERE = fileURLToPath(new URL("../", import.meta.url));
const PACKAGES = [
  "core",
  "sql",
  "text",
  "sql-stores",
  "sqlite",
  "fts5",
  "ai",
  "conformance",
  "r2",
  "sessions",
  "postgres",
  "agents",
] as const;
const REPOSITORY = "https://github.com/contextblocks/contextblocks";
/** Exports that are not modules, left out of attw's type resolution. */
const NON_CODE_EXPORTS: Record<string, string[]> = { postgres: ["./schema.sql"] };

/** Versions the smoke project installs next to the tarballs: the ones that run on Node 20 (TOOLCHAIN.md). */
const THIRD_PARTY = [
  "ai@6.0.325",
  "zod@4.6.7",
  "vitest@4.1.12",
  "@types/node@20.19.43",
  "@types/better-sqlite3@7.6.13",
  "@cloudflare/workers-types@4.20260630.1",
];

const failures: string[] = [];

function fail(message: string): void {
  failures.push(message);
  process.stdout.write(`  ✗ ${message}\n`);
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
    timeout: 5 * 60_000,
  });
}

/** Runs a command that must succeed; on failure records it with its output and returns `null`. */
function must(what: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const child = run(command, args, cwd, env);
  if (child.status !== 0) {
    fail(
      `${what} failed (exit ${child.status ?? child.signal}):\n${child.stdout}\n${child.stderr}`.trimEnd(),
    );
    return null;
  }
  return child;
}

/** `must` without blocking, so independent checks run side by side. */
function mustAsync(what: string, command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: process.env });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("close", (code) => {
      if (code !== 0) fail(`${what} failed (exit ${code}):\n${output}`.trimEnd());
      resolve();
    });
    child.on("error", (error) => {
      fail(`${what} could not start: ${error.message}`);
      resolve();
    });
  });
}

async function stepAsync(title: string, body: () => Promise<void>): Promise<void> {
  const started = performance.now();
  process.stdout.write(`${title}\n`);
  await body();
  process.stdout.write(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

function step(title: string, body: () => void): void {
  const started = performance.now();
  process.stdout.write(`${title}\n`);
  body();
  process.stdout.write(`  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

interface PackedPackage {
  name: string;
  tarball: string;
  tarballBytes: number;
  unpackedBytes: number;
  files: number;
  directory: string;
}

/** Every `.map` in the package resolves each of its `sources` to a file inside the package (or inlines it). */
function checkSourceMaps(packed: PackedPackage): number {
  let checked = 0;
  for (const file of filesUnder(packed.directory).filter((path) => path.endsWith(".map"))) {
    const map = JSON.parse(readFileSync(file, "utf8")) as {
      sources?: string[];
      sourceRoot?: string;
      sourcesContent?: (string | null)[];
    };
    for (const [index, source] of (map.sources ?? []).entries()) {
      checked++;
      if (typeof map.sourcesContent?.[index] === "string") continue;
      const target = resolve(dirname(file), map.sourceRoot ?? "", source);
      const inside = target.startsWith(packed.directory + sep);
      if (!inside || !existsSync(target)) {
        fail(
          `${packed.name}: ${relative(packed.directory, file)} points at ${source}, ${inside ? "not in the tarball" : "outside the package"}`,
        );
      }
    }
  }
  if (checked === 0) fail(`${packed.name}: no source maps in the tarball`);
  return checked;
}

function checkManifest(packed: PackedPackage): void {
  const manifest = JSON.parse(readFileSync(join(packed.directory, "package.json"), "utf8")) as Record<
    string,
    unknown
  > & { repository?: { url?: string; directory?: string }; engines?: { node?: string } };
  if (!existsSync(join(packed.directory, "LICENSE"))) fail(`${packed.name}: no LICENSE in the tarball`);
  if (manifest.engines?.node !== ">=20.3") fail(`${packed.name}: engines.node is not ">=20.3"`);
  if (!manifest.repository?.url?.includes("github.com/contextblocks/contextblocks")) {
    fail(`${packed.name}: repository.url is missing or not ${REPOSITORY}`);
  }
  if (manifest.repository?.directory !== `packages/${packed.name}`) {
    fail(`${packed.name}: repository.directory is not packages/${packed.name}`);
  }
  for (const field of ["homepage", "bugs"]) {
    if (manifest[field] === undefined) fail(`${packed.name}: no ${field}`);
  }
  if (JSON.stringify(manifest).includes("workspace:"))
    fail(`${packed.name}: a workspace: range survived packing`);
}

const SQLITE_WORKER = `import { DurableObject } from "cloudflare:workers";
import { createDurableContext } from "@contextblocks/sqlite";

export class Agent extends DurableObject {
  context = createDurableContext(this.ctx.storage, [
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    { label: "memory", description: "Facts learned about the user", maxTokens: 1100 },
  ]);
  override async fetch(): Promise<Response> {
    return new Response(await this.context.freezeSystemPrompt());
  }
}

export default {
  async fetch(request: Request, env: { AGENT: DurableObjectNamespace<Agent> }): Promise<Response> {
    return env.AGENT.get(env.AGENT.idFromName("agent")).fetch(request);
  },
};
`;

const FTS5_WORKER = SQLITE_WORKER.replace(
  'import { createDurableContext } from "@contextblocks/sqlite";',
  'import { Fts5SearchProvider } from "@contextblocks/fts5";\nimport { createDurableContext } from "@contextblocks/sqlite";',
).replace(
  '    { label: "memory", description: "Facts learned about the user", maxTokens: 1100 },\n',
  '    { label: "memory", description: "Facts learned about the user", maxTokens: 1100 },\n    { label: "knowledge", provider: new Fts5SearchProvider(this.ctx.storage) },\n',
);

const CONFORMANCE_TEST = `import { describeContextProvider } from "@contextblocks/conformance";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import Database from "better-sqlite3";

// The suite from its tarball, as a provider author runs it.
describeContextProvider("SqliteContextProvider", () => new SqliteContextProvider(new Database(":memory:")), {
  capabilities: { writable: true, versions: true }, // history is on by default
});
describeContextProvider("Fts5SearchProvider", () => new Fts5SearchProvider(new Database(":memory:")), {
  capabilities: { searchable: true, writable: true, delete: true },
});
`;

interface Bundle {
  name: string;
  bytes: number;
  gzipBytes: number;
  wranglerTotal: string;
}

function bundleWorker(smoke: string, name: string, source: string, wrangler: string): Bundle | null {
  const directory = join(smoke, "workers", name);
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, "index.ts"), source);
  writeFileSync(
    join(directory, "wrangler.jsonc"),
    JSON.stringify(
      {
        name: `pack-check-${name}`,
        main: "index.ts",
        compatibility_date: "2025-09-01",
        durable_objects: { bindings: [{ name: "AGENT", class_name: "Agent" }] },
        migrations: [{ tag: "v1", new_sqlite_classes: ["Agent"] }],
      },
      null,
      2,
    ),
  );
  const child = must(
    `wrangler deploy --dry-run (${name})`,
    process.execPath,
    [wrangler, "deploy", "--dry-run", "--outdir", "out", "--config", "wrangler.jsonc"],
    directory,
    { WRANGLER_SEND_METRICS: "false", CI: "1", WRANGLER_LOG_PATH: join(directory, "logs") },
  );
  if (child === null) return null;
  const output = join(directory, "out", "index.js");
  if (!existsSync(output)) {
    fail(`wrangler wrote no out/index.js for ${name}`);
    return null;
  }
  const code = readFileSync(output);
  const total = /Total Upload:\s*([^\n]+)/.exec(child.stdout + child.stderr)?.[1]?.trim() ?? "not printed";
  return { name, bytes: code.length, gzipBytes: gzipSync(code).length, wranglerTotal: total };
}

/** What a Postgres user installs: the backend and what it stands on, nothing of SQLite or the AI SDK. */
const POSTGRES_ONLY = ["core", "sql", "text", "sessions", "sql-stores", "postgres"];

/**
 * Installs only `POSTGRES_ONLY`'s tarballs and `pg` into a project of its own, checks that nothing else of
 * ours came with them, then compiles and runs the postgres README's "Postgres only" block against a
 * throwaway server (started here by the workspace's private `@contextblocks/test-kit`: no published package
 * ships a test runner).
 */
async function postgresOnly(work: string, packed: readonly PackedPackage[], tsc: string): Promise<void> {
  const project = join(work, "postgres-only");
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "postgres-only", private: true, type: "module" }),
  );
  const tarballs = POSTGRES_ONLY.map((name) => packed.find((item) => item.name === name)?.tarball);
  if (tarballs.some((tarball) => tarball === undefined)) {
    fail(`the Postgres-only project needs the tarballs of ${POSTGRES_ONLY.join(", ")}`);
    return;
  }
  const installed = must(
    "npm install (Postgres only)",
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      ...(tarballs as string[]),
      "pg@8.23.1",
      "@types/pg@8.23.1",
      "@types/node@20.19.43",
    ],
    project,
  );
  if (installed === null) return;
  const ours = readdirSync(join(project, "node_modules", "@contextblocks")).sort();
  const extra = ours.filter((name) => !POSTGRES_ONLY.includes(name));
  if (extra.length > 0)
    fail(`a Postgres-only install also brought @contextblocks/${extra.join(", @contextblocks/")}`);
  for (const name of ["better-sqlite3", "ai", "zod"]) {
    if (existsSync(join(project, "node_modules", name))) fail(`a Postgres-only install also brought ${name}`);
  }
  const readme = readFileSync(join(ROOT, "packages", "postgres", "README.md"), "utf8");
  const heading = readme.split("\n").findIndex((line) => line.startsWith("## Postgres only"));
  const recipe = extractSnippets("packages/postgres/README.md", readme).find(
    (snippet) => snippet.line > heading,
  );
  if (recipe === undefined) {
    fail('the postgres README has no TypeScript block under "## Postgres only"');
    return;
  }
  writeFileSync(
    join(project, "src", "recipe.ts"),
    `const env = { DATABASE_URL: process.env.DATABASE_URL ?? "" };\n${recipe.code}\n`,
  );
  writeFileSync(join(project, "src", "run.ts"), `await import("./recipe.js");\n`);
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        skipLibCheck: true,
        types: ["node"],
        lib: ["ES2022", "DOM"],
        outDir: "dist",
        rootDir: "src",
      },
      include: ["src"],
    }),
  );
  if (must("tsc (the Postgres-only project)", tsc, ["-p", "tsconfig.json"], project) === null) return;
  const cluster = await startThrowawayCluster();
  let ran: SpawnSyncReturns<string> | null;
  try {
    ran = must("node dist/run.js (Postgres only)", process.execPath, [join("dist", "run.js")], project, {
      DATABASE_URL: cluster.connectionString,
    });
  } finally {
    cluster.stop();
  }
  if (ran === null) return;
  if (!ran.stdout.includes("MEMORY") || !ran.stdout.includes("1 hit, 1 session")) {
    fail(`the Postgres-only recipe printed:\n${ran.stdout}`);
  } else process.stdout.write(`  installed: @contextblocks/${ours.join(", @contextblocks/")}, pg\n`);
}

/** The AI SDK majors the adapter supports, each with the providers of its line (TOOLCHAIN.md). */
const AI_SDK_MAJORS = [
  { name: "ai 7", packages: ["ai@7.0.185", "@ai-sdk/openai@4.0.126", "@ai-sdk/anthropic@4.0.112"] },
  { name: "ai 6", packages: ["ai@6.0.325", "@ai-sdk/openai@3.0.141", "@ai-sdk/anthropic@3.0.140"] },
] as const;

/**
 * A project per AI SDK major: plain `npm install` (no `--legacy-peer-deps`, so the peer range is what
 * decides) of the tarballs with that `ai`, then every TypeScript block of the ai README and the type test
 * compiled against it, with our declarations checked too (`skipLibCheck: false`). ai 7 declares Node 22 in
 * `engines`: on Node 20 npm warns (`EBADENGINE`) and installs it.
 */
function aiSdkProject(
  work: string,
  packed: readonly PackedPackage[],
  tsc: string,
  major: (typeof AI_SDK_MAJORS)[number],
): void {
  const project = join(work, major.name.replace(" ", "-"));
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "ai-sdk-project", private: true, type: "module" }),
  );
  const installed = must(
    `npm install (${major.name})`,
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--ignore-scripts",
      ...packed.map((item) => item.tarball),
      ...major.packages,
      "zod@4.6.7",
      "vitest@4.1.12",
      "better-sqlite3@12.6.2",
      "@types/better-sqlite3@7.6.13",
      "@types/json-schema@7.0.15",
      "@types/node@20.19.43",
    ],
    project,
  );
  if (installed === null) return;
  const readme = readFileSync(join(ROOT, "packages", "ai", "README.md"), "utf8");
  const blocks = extractSnippets("packages/ai/README.md", readme).filter(
    (snippet) => snippet.mode === "compile" || snippet.mode === "run", // Worker blocks: tests/readmes
  );
  blocks.forEach((snippet, index) => {
    writeFileSync(join(project, "src", `readme-${index}.ts`), snippetModule(snippet));
  });
  cpSync(
    join(ROOT, "packages", "ai", "test", "types", "tools.test-d.ts"),
    join(project, "src", "tools.test-d.ts"),
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ["node"],
        lib: ["ES2022", "DOM"],
      },
      include: ["src"],
    }),
  );
  if (
    must(
      `tsc (${major.name}: the ai README's ${blocks.length} blocks, the type test)`,
      tsc,
      ["-p", "tsconfig.json"],
      project,
    ) !== null
  ) {
    const version = JSON.parse(readFileSync(join(project, "node_modules", "ai", "package.json"), "utf8")) as {
      version: string;
    };
    process.stdout.write(
      `  ai ${version.version}: installed without --legacy-peer-deps, ${blocks.length} README blocks compile\n`,
    );
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "contextblocks-pack-"));
  const tarballs = join(work, "tarballs");
  mkdirSync(tarballs);
  const packed: PackedPackage[] = [];

  await stepAsync("pack every package (pnpm pack, side by side)", async () => {
    const ready = PACKAGES.filter((name) => {
      if (existsSync(join(ROOT, "packages", name, "dist"))) return true;
      fail(`packages/${name}/dist is missing: run pnpm build first`);
      return false;
    });
    await Promise.all(
      ready.map((name) =>
        mustAsync(
          `pnpm pack (${name})`,
          "pnpm",
          ["pack", "--pack-destination", tarballs],
          join(ROOT, "packages", name),
        ),
      ),
    );
    for (const name of ready) {
      const { version } = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as {
        version: string;
      };
      const tarball = join(tarballs, `contextblocks-${name}-${version}.tgz`);
      if (!existsSync(tarball)) {
        fail(`pnpm pack wrote no ${relative(work, tarball)}`);
        continue;
      }
      const directory = join(work, "unpacked", name);
      mkdirSync(directory, { recursive: true });
      if (must(`tar -xzf (${name})`, "tar", ["-xzf", tarball, "-C", directory], work) === null) continue;
      const root = join(directory, "package");
      const files = filesUnder(root);
      packed.push({
        name,
        tarball,
        tarballBytes: statSync(tarball).size,
        unpackedBytes: files.reduce((sum, file) => sum + statSync(file).size, 0),
        files: files.length,
        directory: root,
      });
    }
  });

  step("in each tarball: LICENSE, manifest fields, source maps that resolve", () => {
    for (const item of packed) {
      checkManifest(item);
      const sources = checkSourceMaps(item);
      process.stdout.write(`  ${item.name}: ${sources} map sources resolve inside the tarball\n`);
    }
  });

  const bin = (name: string) => join(HERE, "node_modules", ".bin", name);
  await stepAsync("publint --strict and attw --profile esm-only (in parallel)", async () => {
    await Promise.all(
      packed.flatMap((item) => [
        mustAsync(`publint --strict (${item.name})`, bin("publint"), ["--strict", item.directory], work),
        mustAsync(
          `attw --profile esm-only (${item.name})`,
          bin("attw"),
          [
            item.tarball,
            "--profile",
            "esm-only",
            "--format",
            "table-flipped",
            // Non-JavaScript files a package exports (postgres' schema.sql) have no types to resolve.
            ...(NON_CODE_EXPORTS[item.name] ?? []).flatMap((entry) => ["--exclude-entrypoints", entry]),
          ],
          work,
        ),
      ]),
    );
  });

  const smoke = join(work, "smoke");
  mkdirSync(join(smoke, "src"), { recursive: true });
  mkdirSync(join(smoke, "test"), { recursive: true });
  writeFileSync(
    join(smoke, "package.json"),
    JSON.stringify({ name: "smoke", private: true, type: "module" }),
  );
  let installed = false;
  step("a project outside the workspace installs the tarballs with npm", () => {
    // better-sqlite3 is the user's own dependency. Its native build takes minutes on a shared machine, so it
    // is installed without scripts and given the workspace's built binary (same version, same Node).
    const child = must(
      "npm install",
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
        ...packed.map((item) => item.tarball),
        ...THIRD_PARTY,
        "better-sqlite3@12.6.2",
      ],
      smoke,
      { npm_config_nodedir: "/usr" },
    );
    const binary = join("build", "Release", "better_sqlite3.node");
    const built = join(
      realpathSync(
        join(ROOT, "node_modules", ".pnpm", "better-sqlite3@12.6.2", "node_modules", "better-sqlite3"),
      ),
      binary,
    );
    if (child !== null && existsSync(built)) {
      mkdirSync(join(smoke, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true });
      cpSync(built, join(smoke, "node_modules", "better-sqlite3", binary));
    } else if (child !== null)
      fail(`no built better-sqlite3 in the workspace (${built}): run scripts/setup.sh`);
    installed = child !== null;
  });

  if (installed) {
    step("typecheck user code (strict, module nodenext) and run the root README's Node example", () => {
      const readme = readFileSync(join(ROOT, "README.md"), "utf8");
      const example = extractSnippets("README.md", readme).find((snippet) => snippet.mode === "run");
      if (!example) fail("the root README has no block marked <!-- readme-check: run -->");
      writeFileSync(join(smoke, "src", "readme.ts"), example?.code ?? "");
      cpSync(
        join(ROOT, "packages", "ai", "test", "types", "tools.test-d.ts"),
        join(smoke, "src", "tools.test-d.ts"),
      );
      writeFileSync(join(smoke, "test", "conformance.test.ts"), CONFORMANCE_TEST);
      writeFileSync(
        join(smoke, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            module: "nodenext",
            moduleResolution: "nodenext",
            strict: true,
            // As `tsc --init` sets it: the SDK's own declarations need @types/json-schema otherwise.
            skipLibCheck: true,
            types: ["node"],
            lib: ["ES2022", "DOM"],
            outDir: "dist",
            rootDir: ".",
          },
          include: ["src", "test"],
        }),
      );
      if (must("tsc (the smoke project)", bin("tsc"), ["-p", "tsconfig.json"], smoke) === null) return;
      const ran = must(
        "node dist/src/readme.js",
        process.execPath,
        [join("dist", "src", "readme.js")],
        smoke,
      );
      if (ran !== null && !ran.stdout.includes("SOUL"))
        fail(`the README example printed no prompt:\n${ran.stdout}`);
      const again = must(
        "node dist/src/readme.js (cold start)",
        process.execPath,
        [join("dist", "src", "readme.js")],
        smoke,
      );
      // The second run is a cold start: the stored prompt comes back byte for byte, the tools answer alike.
      if (ran !== null && again !== null && again.stdout !== ran.stdout) {
        fail(
          `the README example's second run (a cold start) printed:\n${again.stdout}\nthe first:\n${ran.stdout}`,
        );
      }
    });

    step("the conformance suite from its tarball (vitest) on the SQLite providers", () => {
      const child = must(
        "vitest run (the smoke project)",
        process.execPath,
        [join(smoke, "node_modules", "vitest", "vitest.mjs"), "run", "--dir", "test"],
        smoke,
      );
      const summary = child?.stdout.match(/Tests\s+[^\n]+/)?.[0];
      if (summary) process.stdout.write(`  ${summary.replace(/\u001b\[[0-9;]*m/g, "")}\n`);
    });
  }

  await stepAsync(
    "a Postgres-only project: the postgres README's recipe, with no SQLite package installed",
    async () => {
      await postgresOnly(work, packed, bin("tsc"));
    },
  );

  await stepAsync(
    "a project per AI SDK major (ai 7, ai 6): install without --legacy-peer-deps, compile the ai README",
    async () => {
      for (const major of AI_SDK_MAJORS) aiSdkProject(work, packed, bin("tsc"), major);
    },
  );

  const bundles: Bundle[] = [];
  if (installed) {
    step("bundle two Workers (wrangler deploy --dry-run)", () => {
      const wrangler = join(
        realpathSync(join(ROOT, "packages", "sqlite", "node_modules", "wrangler")),
        "bin",
        "wrangler.js",
      );
      for (const [name, source] of [
        ["core-sqlite", SQLITE_WORKER],
        ["core-sqlite-fts5", FTS5_WORKER],
      ] as const) {
        const bundle = bundleWorker(smoke, name, source, wrangler);
        if (bundle) bundles.push(bundle);
      }
    });
  }

  await stepAsync(
    "the root README's quick start, from the tarballs outside the workspace, under wrangler dev",
    () => quickStart(work, packed),
  );

  process.stdout.write("\n| package | tarball | unpacked | files |\n| --- | ---: | ---: | ---: |\n");
  for (const item of packed) {
    process.stdout.write(
      `| @contextblocks/${item.name} | ${kib(item.tarballBytes)} | ${kib(item.unpackedBytes)} | ${item.files} |\n`,
    );
  }
  process.stdout.write(
    "\n| Worker bundle | minified? | size | gzip | wrangler's Total Upload |\n| --- | --- | ---: | ---: | --- |\n",
  );
  for (const bundle of bundles) {
    process.stdout.write(
      `| ${bundle.name} | no | ${kib(bundle.bytes)} | ${kib(bundle.gzipBytes)} | ${bundle.wranglerTotal} |\n`,
    );
  }
  const sizesFile = join(ROOT, "bench", "out", "package-sizes.json");
  mkdirSync(dirname(sizesFile), { recursive: true });
  writeFileSync(
    sizesFile,
    `${JSON.stringify(
      {
        measured: new Date().toISOString(),
        packages: packed.map(({ name, tarballBytes, unpackedBytes, files }) => ({
          name,
          tarballBytes,
          unpackedBytes,
          files,
        })),
        bundles,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`\nsizes written to ${relative(ROOT, sizesFile)}\n`);

  if (process.env.PACK_CHECK_KEEP === "1") process.stdout.write(`scratch directory kept: ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
  if (failures.length > 0) {
    process.stdout.write(`\npack check: ${failures.length} problem(s)\n`);
    process.exitCode = 1;
  } else
    process.stdout.write("\npack check: every package packs, lints, installs, compiles, runs and bundles\n");
}

/** The workspace packages `names` stand on (their `workspace:` dependencies), `names` included. */
function dependencyClosure(names: readonly string[]): Set<string> {
  const closure = new Set<string>();
  const visit = (name: string) => {
    if (closure.has(name)) return;
    closure.add(name);
    const manifest = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      if (dependency.startsWith("@contextblocks/")) visit(dependency.slice("@contextblocks/".length));
    }
  };
  for (const name of names) visit(name);
  return closure;
}

/**
 * The root README's quick start as a newcomer follows it: its install line (our packages from their
 * tarballs, with the ones they depend on, and AI SDK 7), its two files, `wrangler dev`, and its three turns
 * answered as the README shows.
 */
async function quickStart(work: string, packed: readonly PackedPackage[]): Promise<void> {
  const readme = rootReadme(ROOT);
  const files = quickStartFiles(readme);
  const turns = quickStartTurns(readme);
  if (files.length === 0 || turns.length === 0) {
    fail("the root README's quick start has no marked files or no curl turns");
    return;
  }
  const installLine = /npm install (@contextblocks\/[^\n]+)/.exec(readme)?.[1] ?? "";
  const ours = [...installLine.matchAll(/@contextblocks\/([a-z0-9-]+)/g)].map((match) => match[1] as string);
  const closure = dependencyClosure(ours);
  const project = join(work, "quick-start");
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "my-agent", private: true, type: "module" }),
  );
  const installed = must(
    "npm install (quick start)",
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      ...packed.filter((item) => closure.has(item.name)).map((item) => item.tarball),
      "ai@7.0.185",
      "zod@4.6.7",
    ],
    project,
  );
  if (installed === null) return;
  writeQuickStart(project, files);
  const wrangler = join(
    realpathSync(join(ROOT, "packages", "sqlite", "node_modules", "wrangler")),
    "bin",
    "wrangler.js",
  );
  const port = await freePort();
  let dev: Awaited<ReturnType<typeof startWranglerDev>> | undefined;
  try {
    dev = await startWranglerDev(wrangler, project, port);
    for (const turn of turns) {
      const response = await fetch(`http://127.0.0.1:${port}${turn.path}`, {
        method: "POST",
        body: turn.message,
      });
      const answer = (await response.text()).trim();
      if (answer !== turn.answer) {
        fail(
          `quick start: "${turn.message}" to ${turn.path} answered ${JSON.stringify(answer)}, the README shows ${JSON.stringify(turn.answer)}\n${dev.output()}`,
        );
        return;
      }
      process.stdout.write(`  ${turn.path} "${turn.message}" → ${answer}\n`);
    }
  } catch (error) {
    fail(`quick start: ${(error as Error).message}`);
  } finally {
    dev?.child.kill();
  }
}

await main();
