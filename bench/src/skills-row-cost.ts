/**
 * Cost of skills in storage, per operation, at several skill counts, on the local Cloudflare runtime:
 * - `SqliteSkillProvider` on a Durable Object: rows read and written (the SQL cursor's `rowsRead` and
 *   `rowsWritten`, what Cloudflare bills) for `get` (the listing), `load`, `set` and `delete`;
 * - `R2SkillProvider` on an R2 bucket: the bucket calls each operation makes (list / get / head / put /
 *   delete; R2 bills list and put as class A, get and head as class B).
 *
 * One file, both halves: run with Node (`node --import tsx src/skills-row-cost.ts [--smoke]`), it starts
 * itself as a Worker with wrangler's `unstable_startWorker` and asks it to run each scenario; inside
 * workerd only the Durable Object and the fetch handler below are used.
 */

import { R2SkillProvider, type SkillBucket } from "@contextblocks/r2";
import type { StatementReport } from "@contextblocks/sql";
import type { DurableObjectStateLike } from "@contextblocks/sql/store-kit";
import { SqliteSkillProvider } from "@contextblocks/sqlite";
import { withLocalWorker } from "./local-worker.js";
import { markdownTable } from "./markdown.js";

const SKILL_COUNTS = [10, 1_000] as const;
const SMOKE_SKILL_COUNTS = [10, 50] as const;

/** One operation's cost: SQL rows (SQLite) or bucket calls (R2). */
interface OperationCost {
  operation: string;
  statements: number;
  rowsRead: number;
  rowsWritten: number;
  bucketCalls: string;
}

const keyOf = (index: number) => `skill-${String(index).padStart(4, "0")}`;
/** A realistic skill body: a few kilobytes of Markdown. */
const bodyOf = (index: number) => `# Skill ${index}\n\n${"Step by step instructions. ".repeat(150)}`;

async function sqliteScenario(state: DurableObjectStateLike, count: number): Promise<OperationCost[]> {
  let reports: StatementReport[] = [];
  const skills = new SqliteSkillProvider(state.storage, {
    label: "skills",
    onStatement: (report) => reports.push(report),
  });
  for (let index = 0; index < count; index++) await skills.set(keyOf(index), bodyOf(index), `About ${index}`);
  const measure = async (operation: string, run: () => Promise<unknown>): Promise<OperationCost> => {
    reports = [];
    await run();
    return {
      operation,
      statements: reports.length,
      rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      bucketCalls: "",
    };
  };
  return [
    await measure("get (the listing)", () => skills.get()),
    await measure("load", () => skills.load(keyOf(Math.floor(count / 2)))),
    await measure("load, unknown key", () => skills.load("missing")),
    await measure("set, new skill", () => skills.set("new-skill", bodyOf(-1), "New")),
    await measure("set, changed content", () => skills.set(keyOf(1), "changed", "Changed")),
    await measure("set, unchanged", () => skills.set(keyOf(1), "changed", "Changed")),
    await measure("set, no description (keeps it)", () => skills.set(keyOf(1), "changed again")),
    await measure("delete", () => skills.delete("new-skill")),
  ];
}

/** The real bucket binding with its calls counted by method. */
function counted(bucket: SkillBucket): { bucket: SkillBucket; take(): string } {
  let calls: Record<string, number> = {};
  const proxy = new Proxy(bucket, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls[String(property)] = (calls[String(property)] ?? 0) + 1;
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    bucket: proxy,
    take() {
      const text = Object.entries(calls)
        .map(([method, times]) => `${times} ${method}`)
        .join(" + ");
      calls = {};
      return text || "none";
    },
  };
}

async function r2Scenario(raw: SkillBucket, count: number): Promise<OperationCost[]> {
  const prefix = `bench-${count}-${crypto.randomUUID()}/`;
  const writer = new R2SkillProvider(raw, { prefix });
  for (let start = 0; start < count; start += 50) {
    const batch = Array.from({ length: Math.min(50, count - start) }, (_, offset) => start + offset);
    await Promise.all(batch.map((index) => writer.set(keyOf(index), bodyOf(index), `About ${index}`)));
  }
  const { bucket, take } = counted(raw);
  const skills = new R2SkillProvider(bucket, { prefix });
  const allowed = new R2SkillProvider(bucket, { prefix, keys: [keyOf(0), keyOf(1)] });
  const measure = async (operation: string, run: () => Promise<unknown>): Promise<OperationCost> => {
    take();
    await run();
    return { operation, statements: 0, rowsRead: 0, rowsWritten: 0, bucketCalls: take() };
  };
  return [
    await measure("get (the listing)", () => skills.get()),
    await measure("load", () => skills.load(keyOf(Math.floor(count / 2)))),
    await measure("load, unknown key", () => skills.load("missing")),
    await measure("load, key outside `keys`", () => allowed.load(keyOf(5))),
    await measure("set, with a description", () => skills.set("new-skill", bodyOf(-1), "New")),
    await measure("set, no description (keeps it)", () => skills.set("new-skill", "changed")),
    await measure("delete", () => skills.delete("new-skill")),
  ];
}

/** The Durable Object (SQLite storage) that runs one scenario per request. */
export class SkillsCostObject {
  constructor(
    private readonly state: DurableObjectStateLike,
    private readonly env: { SKILLS: SkillBucket },
  ) {}

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const count = Number(url.searchParams.get("skills") ?? "10");
    try {
      const costs =
        url.searchParams.get("store") === "r2"
          ? await r2Scenario(this.env.SKILLS, count)
          : await sqliteScenario(this.state, count);
      return Response.json(costs);
    } catch (error) {
      return new Response(error instanceof Error ? (error.stack ?? error.message) : String(error), {
        status: 500,
      });
    }
  }
}

interface CostNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export default {
  async fetch(request: Request, env: { SKILLS_COST: CostNamespace }): Promise<Response> {
    const url = new URL(request.url);
    // A fresh object (and so a fresh database) per store and skill count.
    const name = `${url.searchParams.get("store")}-${url.searchParams.get("skills")}`;
    return env.SKILLS_COST.get(env.SKILLS_COST.idFromName(name)).fetch(request);
  },
};

// ── Node: start this file as a Worker and print the figures ────────────────────────────────────────────

export async function runSkillsRowCost(
  smoke: boolean,
  entrypoint: string = decodeURIComponent(new URL(import.meta.url).pathname),
): Promise<string> {
  return withLocalWorker(
    {
      name: "contextblocks-skills-row-cost",
      entrypoint,
      durableObject: { className: "SkillsCostObject", binding: "SKILLS_COST" },
      bindings: { SKILLS: { type: "r2_bucket", bucket_name: "contextblocks-bench-skills" } },
    },
    async (worker) => {
      const counts = smoke ? SMOKE_SKILL_COUNTS : SKILL_COUNTS;
      const fetchCosts = async (store: string, count: number): Promise<OperationCost[]> => {
        const response = await worker.fetch(`http://skills-cost/?store=${store}&skills=${count}`);
        if (!response.ok) throw new Error(`${store}, ${count} skills: ${await response.text()}`);
        return (await response.json()) as OperationCost[];
      };
      const sqlite = await Promise.all(counts.map((count) => fetchCosts("sqlite", count)));
      const r2 = await Promise.all(counts.map((count) => fetchCosts("r2", count)));
      const header = counts.map((count) => `${count.toLocaleString("en-US")} skills`);
      return [
        "## SqliteSkillProvider on a Durable Object: rows read / written (statements)",
        "",
        "`get` reads one row per skill by nature (it lists every key and description), never a skill's content;",
        "every other operation touches the same rows whatever the number of skills (primary key on block and key).",
        "",
        markdownTable(
          ["operation", ...header],
          (sqlite[0] ?? []).map((cost, index) => [
            cost.operation,
            ...sqlite.map((costs) => {
              const at = costs[index];
              return at === undefined ? "n/a" : `${at.rowsRead} / ${at.rowsWritten} (${at.statements})`;
            }),
          ]),
        ),
        "",
        "## R2SkillProvider on an R2 bucket: bucket calls",
        "",
        "A listing is one `list` call per page: up to 1,000 objects, fewer when metadata is included (the local",
        "runtime returns 100 a page); `load` is one `get`; a load outside `keys` makes no call at all.",
        "",
        markdownTable(
          ["operation", ...header],
          (r2[0] ?? []).map((cost, index) => [
            cost.operation,
            ...r2.map((costs) => costs[index]?.bucketCalls ?? "n/a"),
          ]),
        ),
      ].join("\n");
    },
  );
}

const isNodeMain =
  typeof process !== "undefined" &&
  typeof process.argv?.[1] === "string" &&
  process.argv[1].replaceAll("\\", "/").endsWith("src/skills-row-cost.ts");

if (isNodeMain) {
  runSkillsRowCost(process.argv.includes("--smoke")).then(
    (report) => console.log(report),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
