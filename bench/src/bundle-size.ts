/**
 * What contextblocks adds to a Worker, bundled as a new user deploys one: `wrangler deploy --dry-run
 * --minify` over three tiny Workers, each beside the same job done with agents@0.32.0 (`agents/context`,
 * `agents/sessions` on `agents/lifecycle`):
 *
 *   (a) blocks: a Durable Object with a context over its SQLite storage that freezes its prompt;
 *   (b) + sessions: the same, plus a session stored in the object (append, history);
 *   (c) + the AI SDK: one `generateText` turn (ours through `contextPipeline({ model, session })`).
 *
 * `ai` and `zod` are not counted: each Worker has a baseline, the same Durable Object importing only the
 * `ai` / `zod` it ends up bundling (the app's `generateText`, and `zod` where the library pulls it in), and
 * its figures are the Worker's minus the baseline's, minified and gzipped. esbuild's metafile then splits
 * the minified bytes by package, which says where the bytes are (gzip cannot be split by input).
 *
 *   node --import tsx src/bundle-size.ts            # prints the tables
 *   node --import tsx src/bundle-size.ts --files    # and every counted module of each Worker, largest first
 *   node --import tsx src/run-all.ts --only=bundle-size
 *
 * The Workers are written under bench/out/bundle-size/ (so they resolve the bench's own node_modules:
 * the workspace packages' built `dist`, rebuild them first).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const WORK = fileURLToPath(new URL("../out/bundle-size/", import.meta.url));

type System = "contextblocks" | "agents/context";
type Variant = "a" | "b" | "c";

const VARIANTS: Record<Variant, string> = {
  a: "(a) blocks: a context over DO SQLite, frozen prompt",
  b: "(b) blocks + sessions",
  c: "(c) blocks + sessions + AI SDK turn",
};

/** A language model written in the app (both systems and every baseline have the same one). */
const MODEL = `const model = {
  specificationVersion: "v3",
  provider: "bench",
  modelId: "echo",
  supportedUrls: {},
  async doGenerate() {
    return {
      content: [{ type: "text", text: "ok" }],
      finishReason: "stop",
      usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
      warnings: [],
    };
  },
  async doStream() {
    throw new Error("not streamed");
  },
};
`;

/** `agents/context` providers take their host's tagged-template `sql` (an `Agent`'s); this is it on `ctx.storage`. */
const AGENTS_HOST = `function hostOf(storage) {
  return {
    sql(strings, ...values) {
      const query = strings.reduce((text, part, index) => text + part + (index < values.length ? "?" : ""), "");
      return storage.sql.exec(query, ...values).toArray();
    },
  };
}
`;

const ROUTER = `
export default {
  async fetch(request, env) {
    return env.AGENT.get(env.AGENT.idFromName("agent")).fetch(request);
  },
};
`;

export const OURS: Record<Variant, string> = {
  a: `import { DurableObject } from "cloudflare:workers";
import { createDurableContext } from "@contextblocks/sqlite";

export class Agent extends DurableObject {
  context = createDurableContext(this.ctx.storage, [
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    { label: "memory", description: "Facts learned about the user", maxTokens: 1100 },
  ]);
  async fetch() {
    return new Response(await this.context.freezeSystemPrompt());
  }
}
${ROUTER}`,
  b: `import { DurableObject } from "cloudflare:workers";
import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";

export class Agent extends DurableObject {
  session = new SessionBuilder(sqliteBackend(this.ctx.storage))
    .forSession("chat")
    .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
    .withContext("memory", { description: "Facts learned about the user", maxTokens: 1100 })
    .withCachedPrompt()
    .build();
  async fetch(request) {
    const prompt = await this.session.context.freezeSystemPrompt();
    await this.session.appendMessage({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: await request.text() }] });
    return Response.json({ prompt, history: await this.session.getHistory() });
  }
}
${ROUTER}`,
  c: `import { DurableObject } from "cloudflare:workers";
import { contextPipeline } from "@contextblocks/ai";
import { SessionBuilder } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { generateText } from "ai";

${MODEL}
export class Agent extends DurableObject {
  session = new SessionBuilder(sqliteBackend(this.ctx.storage))
    .forSession("chat")
    .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
    .withContext("memory", { description: "Facts learned about the user", maxTokens: 1100 })
    .withCachedPrompt()
    .build();
  async fetch(request) {
    const pipeline = contextPipeline({ model, session: this.session });
    const result = await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: await request.text() });
    return new Response(result.text);
  }
}
${ROUTER}`,
};

const AGENTS_CONTEXT = `  context = new ContextBlocks(
    [
      { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
      { label: "memory", description: "Facts learned about the user", maxTokens: 1100, provider: new AgentContextProvider(hostOf(this.ctx.storage), "memory") },
    ],
    new AgentContextProvider(hostOf(this.ctx.storage), "_system_prompt"),
  );
`;

const AGENTS_SESSIONS = `  sessions = new Sessions();
  lifecycle = Lifecycle.install(this).use(this.sessions);
  session = this.sessions.session("chat");
`;

const ANCHOR: Record<Variant, string> = {
  a: `import { DurableObject } from "cloudflare:workers";
import { AgentContextProvider, ContextBlocks } from "agents/context";

${AGENTS_HOST}
export class Agent extends DurableObject {
${AGENTS_CONTEXT}  async fetch() {
    return new Response(await this.context.freezeSystemPrompt());
  }
}
${ROUTER}`,
  b: `import { DurableObject } from "cloudflare:workers";
import { AgentContextProvider, ContextBlocks } from "agents/context";
import { Lifecycle } from "agents/lifecycle";
import { Sessions } from "agents/sessions";

${AGENTS_HOST}
export class Agent extends DurableObject {
${AGENTS_CONTEXT}${AGENTS_SESSIONS}  async fetch(request) {
    const prompt = await this.context.freezeSystemPrompt();
    await this.session.appendMessage({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: await request.text() }] });
    return Response.json({ prompt, history: await this.session.getHistory() });
  }
}
${ROUTER}`,
  // agents has no pipeline: the app places the prompt and tools, converts the history and stores the answer.
  c: `import { DurableObject } from "cloudflare:workers";
import { AgentContextProvider, ContextBlocks } from "agents/context";
import { Lifecycle } from "agents/lifecycle";
import { Sessions } from "agents/sessions";
import { convertToModelMessages, generateText } from "ai";

${MODEL}
${AGENTS_HOST}
export class Agent extends DurableObject {
${AGENTS_CONTEXT}${AGENTS_SESSIONS}  async fetch(request) {
    await this.session.appendMessage({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: await request.text() }] });
    const result = await generateText({
      model,
      system: await this.context.freezeSystemPrompt(),
      tools: await this.context.tools(),
      messages: await convertToModelMessages(await this.session.getHistory()),
    });
    await this.session.appendMessage({ id: crypto.randomUUID(), role: "assistant", parts: [{ type: "text", text: result.text }] });
    return new Response(result.text);
  }
}
${ROUTER}`,
};

/** A baseline: the Durable Object with only the `ai` / `zod` the Worker bundles (and the app's own code). */
function baseline(system: System, variant: Variant): string {
  const usesAi = variant === "c";
  // agents/context imports zod itself (its tool schemas): not counted, so the baseline bundles it too.
  const usesZod = system === "agents/context";
  const imports = [
    `import { DurableObject } from "cloudflare:workers";`,
    ...(usesAi
      ? [`import { ${system === "agents/context" ? "convertToModelMessages, " : ""}generateText } from "ai";`]
      : []),
    ...(usesZod ? [`import { z } from "zod";`] : []),
  ];
  const body = usesAi
    ? `    const result = await generateText({ model, prompt: await request.text()${
        system === "agents/context" ? ", messages: await convertToModelMessages([])" : ""
      }${usesZod ? ", tools: { t: { inputSchema: z.object({ q: z.string() }) } }" : ""} });
    return new Response(result.text);`
    : `    return new Response(${usesZod ? "JSON.stringify(z.object({ q: z.string() }).parse({ q: await request.text() }))" : "await request.text()"});`;
  return `${imports.join("\n")}

${usesAi ? MODEL : ""}${system === "agents/context" ? AGENTS_HOST : ""}
export class Agent extends DurableObject {
  async fetch(request) {
${body}
  }
}
${ROUTER}`;
}

interface Metafile {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
}

interface Bundled {
  bytes: number;
  gzipBytes: number;
  /** Minified bytes per package (`@contextblocks/core`, `ai`, `(app)`, …), from esbuild's metafile. */
  byPackage: Map<string, number>;
  /** Minified bytes per input module of our packages (`core/dist/render.js`), from the same metafile. */
  byModule: Map<string, number>;
}

function wranglerBin(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");
}

/** The package an input of the metafile belongs to: a workspace package's dist, or a node_modules name. */
export function packageOf(input: string): string {
  const workspace = /(?:^|\/)packages\/([^/]+)\/dist\//.exec(input);
  if (workspace !== null) return `@contextblocks/${workspace[1]}`;
  const modules = input.split("node_modules/");
  if (modules.length > 1) {
    const rest = modules[modules.length - 1] ?? "";
    const parts = rest.split("/");
    return rest.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? rest);
  }
  return "(app and wrangler)";
}

function bundle(id: string, source: string): Bundled {
  const directory = join(WORK, id);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, "index.js"), source);
  writeFileSync(
    join(directory, "wrangler.jsonc"),
    JSON.stringify({
      name: `bundle-size-${id}`,
      main: "index.js",
      compatibility_date: "2025-09-01",
      compatibility_flags: ["nodejs_compat"],
      durable_objects: { bindings: [{ name: "AGENT", class_name: "Agent" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["Agent"] }],
    }),
  );
  const child = spawnSync(
    process.execPath,
    [
      wranglerBin(),
      "deploy",
      "--dry-run",
      "--minify",
      "--outdir",
      "dist",
      "--metafile",
      "meta.json",
      "--config",
      "wrangler.jsonc",
    ],
    {
      cwd: directory,
      encoding: "utf8",
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        CI: "1",
        WRANGLER_LOG_PATH: join(directory, "logs"),
      },
      timeout: 5 * 60_000,
    },
  );
  const output = join(directory, "dist", "index.js");
  if (child.status !== 0 || !existsSync(output)) {
    throw new Error(`wrangler deploy --dry-run (${id}) failed:\n${child.stdout}\n${child.stderr}`);
  }
  const code = readFileSync(output);
  const byPackage = new Map<string, number>();
  const byModule = new Map<string, number>();
  const metafilePath = [join(directory, "meta.json"), join(directory, "dist", "meta.json")].find(existsSync);
  if (metafilePath !== undefined) {
    const metafile = JSON.parse(readFileSync(metafilePath, "utf8")) as Metafile;
    for (const [name, out] of Object.entries(metafile.outputs)) {
      if (!name.endsWith(".js")) continue;
      for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
        const key = packageOf(input);
        byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
        const workspace = /(?:^|\/)packages\/([^/]+\/dist\/.+)$/.exec(input);
        if (workspace?.[1] !== undefined)
          byModule.set(workspace[1], (byModule.get(workspace[1]) ?? 0) + bytesInOutput);
      }
    }
  }
  return { bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, byPackage, byModule };
}

export interface BundleSizeRow {
  system: System;
  variant: Variant;
  /** Minified and gzipped bytes with the baseline (`ai`, `zod`, the Durable Object shell) subtracted. */
  bytes: number;
  gzipBytes: number;
  byPackage: Map<string, number>;
  byModule: Map<string, number>;
}

/** Bundles every Worker and its baseline; `variants` narrows the run (the smoke run bundles (c) only). */
export function measure(variants: readonly Variant[] = ["a", "b", "c"]): BundleSizeRow[] {
  const rows: BundleSizeRow[] = [];
  for (const variant of variants) {
    for (const system of ["contextblocks", "agents/context"] as const) {
      const tag = `${system === "contextblocks" ? "ours" : "agents"}-${variant}`;
      const worker = bundle(tag, (system === "contextblocks" ? OURS : ANCHOR)[variant]);
      const base = bundle(`${tag}-baseline`, baseline(system, variant));
      rows.push({
        system,
        variant,
        bytes: worker.bytes - base.bytes,
        gzipBytes: worker.gzipBytes - base.gzipBytes,
        byPackage: worker.byPackage,
        byModule: worker.byModule,
      });
    }
  }
  return rows;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** `ai`, `zod`, what `ai` brings with it, Node's compatibility shims and the app itself. */
const NOT_COUNTED =
  /^(ai|zod|@ai-sdk\/.*|@opentelemetry\/api|@standard-schema\/.*|@vercel\/oidc|eventsource-parser|unenv|@cloudflare\/unenv-preset|wrangler|\(app and wrangler\))$/;

export function table(rows: readonly BundleSizeRow[]): string {
  const lines = [
    "Minified and gzipped (level 9), `ai` and `zod` subtracted through each Worker's baseline.",
    "",
    "| Worker | contextblocks min | contextblocks gzip | agents/context min | agents/context gzip | gzip ÷ anchor |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const variant of ["a", "b", "c"] as const) {
    const ours = rows.find((row) => row.system === "contextblocks" && row.variant === variant);
    const anchor = rows.find((row) => row.system === "agents/context" && row.variant === variant);
    if (ours === undefined || anchor === undefined) continue;
    lines.push(
      `| ${VARIANTS[variant]} | ${kib(ours.bytes)} | ${kib(ours.gzipBytes)} | ${kib(anchor.bytes)} | ${kib(anchor.gzipBytes)} | ${(ours.gzipBytes / anchor.gzipBytes).toFixed(2)}× |`,
    );
  }
  for (const row of rows.filter((item) => item.variant === "c")) {
    const packages = [...row.byPackage.entries()]
      .filter(([name]) => !NOT_COUNTED.test(name))
      .sort((left, right) => right[1] - left[1]);
    const counted = packages.reduce((sum, [, bytes]) => sum + bytes, 0);
    const excluded = [...row.byPackage.entries()]
      .filter(([name]) => NOT_COUNTED.test(name))
      .sort((left, right) => right[1] - left[1]);
    lines.push(
      "",
      `Worker (c), ${row.system}: minified bytes by package (esbuild's metafile, before gzip)`,
      "",
      "| package | minified |",
      "| --- | ---: |",
      ...packages.map(([name, bytes]) => `| ${name} | ${kib(bytes)} |`),
      `| **counted** | **${kib(counted)}** |`,
      ...excluded.map(([name, bytes]) => `| ${name} (not counted) | ${kib(bytes)} |`),
    );
  }
  return lines.join("\n");
}

/**
 * Every module of our packages in each of our Workers, largest first: where to look for code a Worker
 * bundles but never runs. Not part of RESULTS.md (it changes with every refactor); `--files` prints it.
 */
export function moduleTable(rows: readonly BundleSizeRow[]): string {
  const lines: string[] = [];
  for (const row of rows.filter((item) => item.system === "contextblocks")) {
    const modules = [...row.byModule.entries()].sort((left, right) => right[1] - left[1]);
    lines.push(
      "",
      `${VARIANTS[row.variant]}, contextblocks: minified bytes by module`,
      "",
      "| module | minified bytes |",
      "| --- | ---: |",
      ...modules.filter(([, bytes]) => bytes > 0).map(([name, bytes]) => `| ${name} | ${bytes} |`),
    );
  }
  return lines.join("\n");
}

export async function run(options: { smoke?: boolean; modules?: boolean } = {}): Promise<string> {
  const rows = measure(options.smoke === true ? ["c"] : ["a", "b", "c"]);
  return options.modules === true ? `${table(rows)}\n${moduleTable(rows)}` : table(rows);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(
    await run({ smoke: process.argv.includes("--smoke"), modules: process.argv.includes("--files") }),
  );
}
