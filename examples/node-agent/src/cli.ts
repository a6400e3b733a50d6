/**
 * `pnpm --filter node-agent start`: a short scripted conversation with the agent, offline, printed.
 * `pnpm --filter node-agent start -- --interactive [--db file] [--inspect]`: talk to it yourself; with
 * `--inspect`, `@contextblocks/inspector` serves the agent's memory on 127.0.0.1 (the URL carries a token).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseSections } from "@contextblocks/core";
import { NodeAgent, type TurnResult } from "./agent.js";
import { startInspector } from "./inspect.js";

const COLOR = process.stdout.isTTY === true && !process.env.NO_COLOR;
const style = (code: string) => (text: string) => (COLOR ? `\u001b[${code}m${text}\u001b[0m` : text);
const bold = style("1");
const dim = style("2");
const green = style("32");
const cyan = style("36");

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const quote = (text: string, prefix = "   │ ") => {
  for (const line of text.split("\n")) console.log(dim(prefix) + line);
};
const ok = (text: string) => console.log(`   ${green("✓")} ${text}`);
const heading = (text: string) => console.log(`\n${bold(cyan(text))}`);

function check(condition: boolean, claim: string): void {
  if (!condition) throw new Error(`Expected: ${claim}`);
}

function printTurn(message: string, result: TurnResult): void {
  console.log(`   ${bold("you")}   › ${message}`);
  for (const call of result.toolCalls) {
    console.log(`   ${bold("tool")}  › ${call.tool} ${JSON.stringify(call.input)}`);
    quote(typeof call.output === "string" ? call.output : JSON.stringify(call.output), "         ‹ ");
  }
  const [first, ...rest] = result.reply.split("\n");
  console.log(`   ${bold("agent")} › ${first}`);
  for (const line of rest) console.log(`           ${line}`);
}

async function say(agent: NodeAgent, message: string): Promise<TurnResult> {
  const result = await agent.chat(message);
  printTurn(message, result);
  return result;
}

function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

async function scripted(path: string): Promise<void> {
  console.log(bold("contextblocks node-agent: the worker-agent's agent in Node, on one better-sqlite3 file"));
  let agent = await NodeAgent.open(path);
  console.log(
    dim(`Database: ${path}. Model: ${agent.modelName} (offline scripted model, no key, no network).`),
  );

  const frozen = await agent.prompt();
  heading(`1. The frozen system prompt (sha256 ${sha(frozen).slice(0, 16)}…)`);
  quote(frozen);

  heading("2. A memory write through set_context");
  const write = await say(agent, "Remember that I prefer TypeScript and short answers.");
  check(write.toolCalls[0]?.tool === "set_context", "the model called set_context");
  await say(agent, "How do I run the tests?");
  check((await agent.prompt()) === frozen, "the prompt is byte-identical after the write");
  ok(
    `The next turn's prompt is byte-identical: sha256 ${sha(frozen).slice(0, 16)}…; the write is stored, not in it.`,
  );

  heading("3. The date changes: a reminder, not a new prompt");
  const tomorrow = dayAfter(agent.today());
  agent.setDate(tomorrow);
  const dated = await say(agent, "What is the date today?");
  check(dated.reminder?.includes(`Today is ${tomorrow}.`) === true, "the turn carried a date reminder");
  quote(dated.reminder ?? "");
  check((await agent.prompt()) === frozen, "the prompt is unchanged by the date");
  ok("The reminder rode on the user's message; the prompt is unchanged.");

  heading("4. Close the database and open it again: a cold start");
  agent.close();
  agent = await NodeAgent.open(path);
  const cold = await agent.prompt();
  check(cold === frozen, "the prompt after reopening is byte-identical");
  ok(`Same prompt after the cold start: sha256 ${sha(cold).slice(0, 16)}…`);

  heading("5. Refresh: the one deliberate rebuild");
  const refreshed = await agent.refresh();
  check(
    refreshed.includes("I prefer TypeScript") && refreshed.includes(tomorrow),
    "the refresh promoted both",
  );
  const old = new Set(parseSections(frozen).map((section) => section.text));
  const changed = parseSections(refreshed).filter((section) => !old.has(section.text));
  quote(changed.map((section) => section.text).join("\n\n"));
  ok(
    `sha256 ${sha(frozen).slice(0, 16)}… → ${sha(refreshed).slice(0, 16)}…; no reminder pending: ${(await agent.reminder()) === null}`,
  );
  agent.close();
}

async function interactive(path: string, inspect: boolean): Promise<void> {
  const agent = await NodeAgent.open(path);
  console.log(bold(`node-agent on ${path} (${agent.modelName})`));
  const inspector = inspect ? await startInspector(agent) : undefined;
  if (inspector) console.log(dim(`Inspector (live): ${inspector.url}`));
  console.log(dim("Type a message, or /prompt /blocks /reminder /refresh /date YYYY-MM-DD|clear /quit"));
  const lines = createInterface({ input: process.stdin, output: process.stdout, prompt: "> " });
  try {
    lines.prompt();
    for await (const raw of lines) {
      const line = raw.trim();
      if (line === "/quit" || line === "/exit") break;
      if (line !== "") await command(agent, line);
      lines.prompt();
    }
  } finally {
    lines.close();
    await inspector?.close();
    agent.close();
  }
}

async function command(agent: NodeAgent, line: string): Promise<void> {
  if (line === "/prompt") quote(await agent.prompt());
  else if (line === "/reminder") quote((await agent.reminder()) ?? "(none)");
  else if (line === "/refresh") quote(await agent.refresh());
  else if (line === "/blocks") {
    for (const block of await agent.blocks()) {
      const usage = block.maxTokens ? `${block.tokens}/${block.maxTokens} tokens` : `${block.tokens} tokens`;
      console.log(`   ${bold(block.label)} [${block.kind}] ${usage}`);
      quote(block.content || "(empty)", "     │ ");
    }
  } else if (line.startsWith("/date ")) {
    const value = line.slice(6).trim();
    if (value !== "clear" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      console.log("   /date YYYY-MM-DD or /date clear");
      return;
    }
    agent.setDate(value === "clear" ? null : value);
    console.log(dim(`   today is ${agent.today()}`));
  } else if (line.startsWith("/")) {
    console.log("   Commands: /prompt /blocks /reminder /refresh /date YYYY-MM-DD|clear /quit");
  } else {
    printTurn(line, await agent.chat(line));
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--db");
  const given = at === -1 ? undefined : args[at + 1];
  if (args.includes("--interactive") || args.includes("-i")) {
    await interactive(given ?? "node-agent.db", args.includes("--inspect"));
    return;
  }
  const directory = given === undefined ? mkdtempSync(join(tmpdir(), "node-agent-")) : undefined;
  const path = given ?? join(directory ?? ".", "agent.db");
  try {
    await scripted(path);
    console.log(
      `\n${green("Done.")} ${directory ? "Temporary database removed." : `Database kept at ${path}.`}`,
    );
  } finally {
    if (directory) rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
