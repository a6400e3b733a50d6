import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import { AgentContextProvider, ContextBlocks as A } from "agents/context";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "./agents-sql.js";
import { collectGarbage } from "./collect-garbage.js";
import { knowledgeEntry } from "./corpus.js";
const count = Number(process.argv[3] ?? 200);
const which = process.argv[2] ?? "ours";
const mode = process.argv[4] ?? "freeze"; // freeze: pre-built instances; both: construct + freeze
function cfgs<P>(provider: (l: string) => P) {
  return Array.from({ length: count }, (_, i) => { const label = `block_${i}`; return { label, description: `Block number ${i}`, maxTokens: 1000, provider: provider(label) }; });
}
async function system() {
  const db = new Database(":memory:");
  const host = betterSqlite3Host(new Database(":memory:"));
  const create = which === "ours"
    ? () => new ContextBlocks(cfgs((l) => new SqliteContextProvider(db, l)) as ContextConfig[], new SqliteContextProvider(db, "_system_prompt"))
    : () => new A(cfgs((l) => new AgentContextProvider(host, l)) as any, new AgentContextProvider(host, "_system_prompt"));
  const seed = create();
  for (let i = 0; i < count; i++) await seed.setBlock(`block_${i}`, knowledgeEntry(i).content);
  await create().freezeSystemPrompt();
  return create;
}
const create = await system();
const times: number[] = [];
const calls = count > 50 ? 5 : 40;
for (let round = 0; round < 60; round++) {
  const prepared = mode === "freeze" ? Array.from({ length: calls }, () => create()) : [];
  collectGarbage();
  const u = process.cpuUsage();
  if (mode === "freeze") for (const c of prepared) await c.freezeSystemPrompt();
  else for (let c = 0; c < calls; c++) await create().freezeSystemPrompt();
  const d = process.cpuUsage(u);
  times.push((d.user + d.system) / calls);
}
times.sort((a, b) => a - b);
console.log(which, count, mode, "median µs", times[times.length >> 1]!.toFixed(1));
