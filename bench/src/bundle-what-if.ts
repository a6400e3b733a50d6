/**
 * What a Worker would save if some modules were not bundled: the contextblocks Worker of `bundle-size.ts`
 * bundled with esbuild (minified, `ai`, `zod` and `cloudflare:workers` left external, so only our code is
 * counted), once whole and once per group below with the group's modules replaced by empty ones. The
 * difference is what moving that group out of the default path could save, in gzip, which the metafile's
 * minified bytes per module cannot say (gzip cannot be split by input).
 *
 *   node --import tsx src/bundle-what-if.ts          # Worker (c); `--worker=a` or `--worker=b` for the others
 *
 * The stubbed bundle does not run: this is a size estimate for choosing what to move, not a build. Uses the
 * esbuild wrangler bundles with (no dependency of its own) and the workspace packages' built `dist`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { OURS } from "./bundle-size.js";

const WORK = fileURLToPath(new URL("../out/bundle-what-if/", import.meta.url));

/** Groups of modules (paths under `packages/`), each with what it is and when a Worker runs it. */
export const GROUPS: readonly { name: string; when: string; modules: readonly string[] }[] = [
  {
    name: "sessions: the lean and agents@0.22.0 (indexed) layouts",
    when: "a database agents@0.22.0 wrote, or a new one on better-sqlite3 (a Durable Object gets keyed)",
    modules: [
      "sqlite/dist/indexed-layout.js",
      "sqlite/dist/lean-layout.js",
      "sqlite/dist/lean-path.js",
      "sqlite/dist/lean-tail.js",
      "sqlite/dist/tombstones.js",
    ],
  },
  {
    name: "sessions: the agents@0.22.0 (indexed) layout alone",
    when: "a database agents@0.22.0 wrote or shares",
    modules: ["sqlite/dist/indexed-layout.js"],
  },
  {
    name: "sessions: schema creation and upgrades",
    when: "the first open of a database (creation), or one an earlier release wrote (upgrade)",
    modules: ["sqlite/dist/session-migration.js"],
  },
  {
    name: "blocks: versions",
    when: "every changed block write (on by default, `versions: false` turns it off)",
    modules: ["sql-stores/dist/block-history.js", "sql-stores/dist/recent-versions.js"],
  },
  {
    name: "sessions: the search query (statements, stemming, stopwords)",
    when: "a session search (the model's search tool, `Session.search`)",
    modules: [
      "sqlite/dist/message-search.js",
      "text/dist/porter.js",
      "text/dist/plan.js",
      "text/dist/stopwords.js",
    ],
  },
  {
    name: "core: the model's tools",
    when: "every model turn (the pipeline offers them)",
    modules: [
      "core/dist/tools/edit-context.js",
      "core/dist/tools/set-context.js",
      "core/dist/tools/load-context.js",
      "core/dist/tools/search-context.js",
      "core/dist/tools/fields.js",
    ],
  },
  {
    name: "sessions: the registry",
    when: "`SessionManager` only (a `SessionBuilder` session never touches it)",
    modules: ["sql-stores/dist/sql-session-registry.js", "sqlite/dist/sqlite-session-registry.js"],
  },
  {
    name: "sessions: run state",
    when: "a pipeline turn (an interrupted run resumed)",
    modules: ["sql-stores/dist/sql-run-state-store.js", "sqlite/dist/sqlite-run-state-store.js"],
  },
  {
    name: "ai: prompt-cache hints (Anthropic, Bedrock, OpenAI)",
    when: "every pipeline call (each provider ignores the others' hints)",
    modules: ["ai/dist/pipeline/cache-hints.js", "ai/dist/pipeline/cache-breakpoints.js"],
  },
  {
    name: "core: the `edit_context` tool",
    when: "a model edit of one line of a block",
    modules: ["core/dist/tools/edit-context.js", "core/dist/edits.js"],
  },
  {
    name: "tracing (OpenTelemetry-shaped spans)",
    when: "only when a tracer is given",
    modules: ["core/dist/tracing.js", "ai/dist/pipeline/model-call-span.js"],
  },
  {
    name: "driver adapters a Durable Object never uses",
    when: "better-sqlite3 (Node); the Postgres ones only to refuse a Postgres handle by name",
    modules: ["sql/dist/better-sqlite3.js", "sql/dist/pg.js", "sql/dist/postgres-js.js"],
  },
];

/** The part of esbuild's API used here (the bench has no esbuild types: wrangler brings esbuild along). */
interface Esbuild {
  build(options: Record<string, unknown> & { plugins: EsbuildPlugin[] }): Promise<{
    outputFiles?: { contents: Uint8Array }[];
  }>;
}
interface EsbuildPlugin {
  name: string;
  setup(build: {
    onLoad(
      options: { filter: RegExp },
      callback: (args: { path: string }) => { contents: string; loader: "js" } | undefined,
    ): void;
  }): void;
}

function esbuild(): Esbuild {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve("wrangler/package.json"))("esbuild") as Esbuild;
}

/** The names a built module exports (tsc's output: `export function|class|const|let …` and `export { … }`). */
function exportNames(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const names = new Set<string>();
  for (const match of text.matchAll(
    /export (?:async )?(?:function\*?|class|const|let|var) ([A-Za-z_$][\w$]*)/g,
  )) {
    if (match[1] !== undefined) names.add(match[1]);
  }
  for (const match of text.matchAll(/export \{([^}]*)\}/g)) {
    for (const part of (match[1] ?? "").split(",")) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (name !== undefined && name !== "") names.add(name);
    }
  }
  return [...names];
}

async function bundledSize(
  entry: string,
  stubbed: readonly string[],
): Promise<{ bytes: number; gzipBytes: number }> {
  const result = await esbuild().build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    write: false,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["ai", "zod", "cloudflare:workers", "@ai-sdk/*", "node:*"],
    logLevel: "silent",
    plugins: [
      {
        name: "stub-modules",
        setup(build) {
          build.onLoad({ filter: /packages[\\/].*[\\/]dist[\\/].*\.js$/ }, (args) => {
            const path = args.path.replaceAll("\\", "/");
            // A module path, or a package's folder (`core/`) for every module of the package.
            const matches = (module: string) =>
              module.endsWith("/")
                ? path.includes(`packages/${module}`)
                : path.endsWith(`packages/${module}`);
            if (!stubbed.some(matches)) return undefined;
            const contents = exportNames(args.path)
              .map((name) => `export const ${name} = void 0;`)
              .join("\n");
            return { contents, loader: "js" };
          });
        },
      },
    ],
  });
  const code = result.outputFiles?.[0]?.contents ?? new Uint8Array();
  return { bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
}

export async function run(worker: "a" | "b" | "c" = "c"): Promise<string> {
  const directory = join(WORK, `ours-${worker}`);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const entry = join(directory, "index.js");
  writeFileSync(entry, OURS[worker]);
  const whole = await bundledSize(entry, []);
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const lines = [
    `Worker (${worker}), our code alone (esbuild, minified, \`ai\`/\`zod\` external): ${kib(whole.bytes)} minified, ${kib(whole.gzipBytes)} gzip.`,
    "",
    "| group | a Worker runs it | minified saved | gzip saved | share of gzip |",
    "| --- | --- | ---: | ---: | ---: |",
  ];
  for (const group of GROUPS) {
    const without = await bundledSize(entry, group.modules);
    const saved = whole.gzipBytes - without.gzipBytes;
    if (without.bytes === whole.bytes) continue; // this Worker does not bundle the group
    lines.push(
      `| ${group.name} | ${group.when} | ${kib(whole.bytes - without.bytes)} | ${kib(saved)} | ${((100 * saved) / whole.gzipBytes).toFixed(1)}% |`,
    );
  }
  // The ceiling of moving optional code out: every group above but the tools the pipeline always offers.
  const optional = GROUPS.filter((group) => !group.name.startsWith("core: the model's tools")).flatMap(
    (group) => group.modules,
  );
  const without = await bundledSize(entry, optional);
  const saved = whole.gzipBytes - without.gzipBytes;
  lines.push(
    `| **every group above but the model's tools, together** | | ${kib(whole.bytes - without.bytes)} | ${kib(saved)} | ${((100 * saved) / whole.gzipBytes).toFixed(1)}% |`,
  );
  lines.push(
    "",
    "Each package's share, the same way (its every module emptied, so with it goes what only it reaches: the package the Worker imports counts all it bundles).",
    "",
    "| package | minified | gzip | share of gzip |",
    "| --- | ---: | ---: | ---: |",
  );
  for (const name of ["core", "sql", "sql-stores", "text", "sqlite", "sessions", "ai"]) {
    const without = await bundledSize(entry, [`${name}/`]);
    const saved = whole.gzipBytes - without.gzipBytes;
    if (whole.bytes === without.bytes) continue;
    lines.push(
      `| @contextblocks/${name} | ${kib(whole.bytes - without.bytes)} | ${kib(saved)} | ${((100 * saved) / whole.gzipBytes).toFixed(1)}% |`,
    );
  }
  return lines.join("\n");
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chosen = process.argv.find((argument) => argument.startsWith("--worker="))?.slice("--worker=".length);
  console.log(await run(chosen === "a" || chosen === "b" ? chosen : "c"));
}
