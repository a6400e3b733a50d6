#!/usr/bin/env node
// Runs cloudflare/agents' own Sessions API test files (packages/agents/src/tests/experimental/memory/session/
// search, skills, init-lifecycle and session), unchanged, against this package's compatibility entry.
//
//   node scripts/run-upstream-tests.mjs <agents checkout> [--rev <git revision>]
//   AGENTS_CHECKOUT=<path> pnpm --filter @contextblocks/agents test:upstream
//
// <agents checkout> is a clone of github.com/cloudflare/agents (a working tree, or a bare repository read with
// `git show <rev>:<path>`; --rev defaults to HEAD). The files are copied into a temporary directory outside
// this repository, next to small modules standing in for agents' sources: every
// `experimental/memory/session/*` path re-exports `@contextblocks/agents/experimental/memory/session`, every
// `experimental/memory/utils/*` path re-exports `@contextblocks/agents/experimental/memory/utils`, and the
// package root (`Agent`, `getAgentByName`) and `chat` re-export agents@0.22.0 itself (installed as
// `agents-session`), because the Durable Object tests host the Session on agents' own `Agent`. The copies run in
// workerd (`@cloudflare/vitest-pool-workers`), as they do in agents' repository. Build the package first
// (`pnpm --filter @contextblocks/agents... build`); with no checkout the script prints a notice and exits 0.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const packageDirectory = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const testDirectory = "packages/agents/src/tests/experimental/memory/session";
const testFiles = ["search", "skills", "init-lifecycle", "session"];
// The Durable Object classes session.test.ts reaches through `env` live in agents' test agents.
const agentFiles = ["multi-session", "session"];
const durableObjects = ["TestMultiSessionAgent", "TestSearchAgent"];

const args = process.argv.slice(2);
const revisionFlag = args.indexOf("--rev");
const revision = revisionFlag === -1 ? undefined : args[revisionFlag + 1];
const keep = args.includes("--keep");
const positional = args.filter((arg, index) => !arg.startsWith("--") && args[index - 1] !== "--rev");
const checkout = positional[0] ?? process.env.AGENTS_CHECKOUT;

if (!checkout) {
  console.log(
    "run-upstream-tests: skipped, no cloudflare/agents checkout given.\n" +
      "  Usage: node scripts/run-upstream-tests.mjs <path to a clone of github.com/cloudflare/agents> [--rev <rev>]\n" +
      "  or set AGENTS_CHECKOUT.",
  );
  process.exit(0);
}
if (
  !existsSync(join(packageDirectory, "dist", "index.js")) ||
  !existsSync(join(packageDirectory, "dist", "utils.js"))
) {
  console.error("run-upstream-tests: build the package first: pnpm --filter @contextblocks/agents... build");
  process.exit(1);
}

/** A file of the checkout: from the working tree, or with `git show` for a bare clone or a given revision. */
function upstreamFile(path) {
  const onDisk = join(checkout, path);
  if (revision === undefined && existsSync(onDisk)) return readFileSync(onDisk, "utf8");
  return execFileSync("git", ["-C", checkout, "show", `${revision ?? "HEAD"}:${path}`], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
}

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const directory = mkdtempSync(join(tmpdir(), "contextblocks-upstream-"));
const source = join(directory, "src");
for (const name of testFiles) {
  write(
    join(directory, testDirectory.replace("packages/agents/", ""), `${name}.test.ts`),
    upstreamFile(`${testDirectory}/${name}.test.ts`),
  );
}
for (const name of agentFiles) {
  write(
    join(source, "tests", "agents", `${name}.ts`),
    upstreamFile(`packages/agents/src/tests/agents/${name}.ts`),
  );
}
const reexport = (specifier) => `export * from "${specifier}";\n`;
for (const name of ["index", "context", "search", "skills", "session", "types", "provider"]) {
  write(
    join(source, "experimental", "memory", "session", `${name}.ts`),
    reexport("@contextblocks/agents/experimental/memory/session"),
  );
}
for (const name of ["index", "compaction-helpers", "compaction", "tokens"]) {
  write(
    join(source, "experimental", "memory", "utils", `${name}.ts`),
    reexport("@contextblocks/agents/experimental/memory/utils"),
  );
}
write(join(source, "index.ts"), reexport("agents-session"));
write(join(source, "chat", "index.ts"), reexport("agents-session/chat"));
write(
  join(directory, "worker.ts"),
  `export { TestMultiSessionAgent } from "./src/tests/agents/multi-session";\n` +
    `export { TestSearchAgent } from "./src/tests/agents/session";\n` +
    `export default { fetch: () => new Response("agents upstream tests") };\n`,
);
write(
  join(directory, "wrangler.json"),
  JSON.stringify(
    {
      name: "contextblocks-agents-upstream",
      main: "./worker.ts",
      compatibility_date: "2026-04-01",
      compatibility_flags: ["nodejs_compat"],
      durable_objects: { bindings: durableObjects.map((name) => ({ name, class_name: name })) },
      migrations: [{ tag: "v1", new_sqlite_classes: durableObjects }],
    },
    null,
    2,
  ),
);

const results = join(directory, "results.json");
const vitest = spawnSync(
  process.execPath,
  [
    join(packageDirectory, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--config",
    join(packageDirectory, "scripts", "upstream.vitest.config.ts"),
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${results}`,
  ],
  { cwd: packageDirectory, stdio: "inherit", env: { ...process.env, UPSTREAM_TESTS_DIRECTORY: directory } },
);

let failed = vitest.status !== 0;
if (existsSync(results)) {
  const report = JSON.parse(readFileSync(results, "utf8"));
  console.log("\ncloudflare/agents' tests against @contextblocks/agents (passed / total):");
  for (const name of testFiles) {
    const file = report.testResults.find((result) => result.name.endsWith(`/${name}.test.ts`));
    const tests = file?.assertionResults ?? [];
    const passed = tests.filter((test) => test.status === "passed").length;
    console.log(`  ${name}.test.ts: ${passed} / ${tests.length}`);
    for (const test of tests.filter((each) => each.status !== "passed")) {
      console.log(`    ${test.status}: ${test.ancestorTitles.join(" > ")} > ${test.title}`);
    }
  }
} else {
  failed = true;
}
if (keep) console.log(`\nThe copies are kept in ${directory}`);
else rmSync(directory, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
