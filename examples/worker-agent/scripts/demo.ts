/**
 * `pnpm demo`: runs the worker-agent locally in workerd (`wrangler dev`), drives a scripted conversation
 * over HTTP, and prints what happens to the prompt. Offline, no account, no API key. Checks every claim it
 * prints and exits non-zero when one does not hold. `--keep` leaves the server running for the inspector.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSections } from "@contextblocks/core";
import type { AgentSnapshot, ChatResult, RefreshResult } from "../src/snapshot.js";
import { seedSkills } from "./seed-skills.js";
import { groupAlive, killAllNow, startWranglerDev, stopAll, type WranglerDev } from "./wrangler-dev.js";

const AGENT = "demo";
const KEEP = process.argv.includes("--keep");
const COLOR = process.stdout.isTTY === true && !process.env.NO_COLOR;

const style = (code: string) => (text: string) => (COLOR ? `\u001b[${code}m${text}\u001b[0m` : text);
const bold = style("1");
const dim = style("2");
const green = style("32");
const cyan = style("36");
const yellow = style("33");

const started = Date.now();
const persistTo = mkdtempSync(join(tmpdir(), "worker-agent-demo-"));
let cleaned = false;
/** With --keep, Ctrl-C is how the run ends: a success, not an interruption. */
let waitingForCtrlC = false;

function cleanUpNow(): void {
  if (cleaned) return;
  cleaned = true;
  killAllNow();
  rmSync(persistTo, { recursive: true, force: true });
}

process.on("exit", cleanUpNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    void stopAll().finally(() => {
      cleanUpNow();
      if (waitingForCtrlC)
        console.log(`\n${green("Stopped.")} wrangler and workerd stopped, temporary state removed.`);
      process.exit(waitingForCtrlC ? 0 : signal === "SIGINT" ? 130 : 143);
    });
  });
}

class DemoFailure extends Error {}

function check(condition: boolean, claim: string): void {
  if (!condition) throw new DemoFailure(`Expected: ${claim}`);
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function short(hash: string): string {
  return hash.slice(0, 16);
}

function heading(step: number, title: string): void {
  console.log(`\n${bold(cyan(`${step}. ${title}`))}`);
}

function quote(text: string, prefix = "   │ "): void {
  for (const line of text.split("\n")) console.log(dim(prefix) + line);
}

function ok(text: string): void {
  console.log(`   ${green("✓")} ${text}`);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

async function request(dev: WranglerDev, method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${dev.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new DemoFailure(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

const getPrompt = async (dev: WranglerDev) => (await request(dev, "GET", `/agents/${AGENT}/prompt`)).text();
const getSnapshot = async (dev: WranglerDev): Promise<AgentSnapshot> =>
  (await request(dev, "GET", `/agents/${AGENT}/blocks`)).json() as Promise<AgentSnapshot>;

async function say(dev: WranglerDev, message: string): Promise<ChatResult> {
  console.log(`   ${bold("you")}   › ${message}`);
  const result = (await (
    await request(dev, "POST", `/agents/${AGENT}/chat`, { message })
  ).json()) as ChatResult;
  for (const call of result.toolCalls) {
    console.log(`   ${bold("tool")}  › ${call.tool} ${JSON.stringify(call.input)}`);
    const output = typeof call.output === "string" ? call.output : JSON.stringify(call.output);
    quote(output, "         ‹ ");
  }
  const [first, ...rest] = result.reply.split("\n");
  console.log(`   ${bold("agent")} › ${first}`);
  for (const line of rest) console.log(`           ${line}`);
  return result;
}

async function start(label: string): Promise<WranglerDev> {
  const since = Date.now();
  process.stdout.write(dim(`   ${label} wrangler dev --ip 127.0.0.1 (state in ${persistTo}) … `));
  const dev = await startWranglerDev({ persistTo, vars: { INSPECTOR_TOKEN } });
  console.log(dim(`answering on ${dev.url} after ${seconds(since)}`));
  return dev;
}

/** This run's inspector token: the page is private (it shows the agent's memory), even locally. */
const INSPECTOR_TOKEN = randomBytes(16).toString("hex");

async function main(): Promise<void> {
  console.log(bold("contextblocks demo: an agent in a Durable Object, run locally in workerd"));
  console.log(dim("Offline: the scripted model stands in for an LLM; no account, no API key, no network.\n"));

  const seedingSince = Date.now();
  process.stdout.write(dim("   Uploading skills/*/SKILL.md into the local R2 bucket (pnpm seed-skills) … "));
  const seeded = await seedSkills(persistTo);
  console.log(dim(`${seeded.map((skill) => skill.key).join(", ")} after ${seconds(seedingSince)}`));
  let dev = await start("Starting");

  // 1. The frozen prompt.
  const frozen = await getPrompt(dev);
  const frozenHash = sha256(frozen);
  const first = await getSnapshot(dev);
  heading(1, `The frozen system prompt ${dim(`(GET /agents/${AGENT}/prompt)`)}`);
  quote(frozen);
  console.log(dim(`   sha256 ${frozenHash}, ${Buffer.byteLength(frozen)} bytes.`));
  console.log(
    dim(
      `   Model: ${first.model}${first.offline ? " (offline scripted model)" : ""}. Tools: ${first.tools.map((tool) => tool.name).join(", ")}.`,
    ),
  );

  // 2. A memory write through set_context.
  heading(2, "A memory write through set_context");
  const write = await say(dev, "Remember that I prefer TypeScript and short answers.");
  check(write.toolCalls[0]?.tool === "set_context", "the model called set_context");
  const memory = (await getSnapshot(dev)).blocks.find((block) => block.label === "memory");
  check(memory?.content.includes("I prefer TypeScript") === true, "the memory block holds the fact");
  ok(`Stored in the Durable Object's SQLite at once: memory = ${JSON.stringify(memory?.content)}`);

  // 3. The next turn's prompt is byte-identical.
  heading(3, "The next turn sends the same prompt, byte for byte");
  const question = await say(dev, "How do I run the tests?");
  check(question.toolCalls[0]?.tool === "search_context", "the model searched the knowledge block");
  check(question.systemIsFrozenPrompt, "the turn's system prompt is the frozen prompt");
  const afterWrite = await getPrompt(dev);
  check(afterWrite === frozen, "the prompt is byte-identical after the write");
  check(!afterWrite.includes("I prefer TypeScript"), "the write is not in the prompt yet");
  ok(
    `Prompt after the write: sha256 ${short(sha256(afterWrite))}… = before: ${short(frozenHash)}… ` +
      `(${Buffer.byteLength(afterWrite)} bytes, byte-identical). The provider's prefix cache stays warm.`,
  );

  // 4. A skill from R2: loaded and unloaded, the prompt and the tools unchanged.
  heading(4, "A skill from R2: load it, use it, unload it");
  const skillsBlock = first.blocks.find((block) => block.label === "skills");
  check(
    seeded.every((skill) => skillsBlock?.content.includes(`- ${skill.key}`) === true),
    "the skills block lists every uploaded skill",
  );
  console.log(dim("   The prompt lists the skills (key: description); their text stays in R2 until loaded."));
  const loaded = await say(dev, "Load the code-review skill.");
  check(loaded.toolCalls[0]?.tool === "load_context", "the model called load_context");
  check(
    JSON.stringify(loaded.toolCalls[0]?.output).includes("Reviewing a pull request"),
    "load_context returned the skill's text",
  );
  const whileLoaded = await getSnapshot(dev);
  check(
    whileLoaded.blocks.find((block) => block.label === "skills")?.loaded?.includes("code-review") === true,
    "the inspector shows code-review as loaded",
  );
  const unloaded = await say(dev, "Unload the code-review skill.");
  check(unloaded.toolCalls[0]?.tool === "unload_context", "the model called unload_context");
  const afterSkills = await getSnapshot(dev);
  check(afterSkills.prompt === frozen, "the prompt is byte-identical after the load and the unload");
  check(
    JSON.stringify(afterSkills.tools) === JSON.stringify(first.tools),
    "the tool definitions are byte-identical after the load and the unload",
  );
  ok(
    `Prompt still sha256 ${short(sha256(afterSkills.prompt))}…, tool definitions unchanged: loading a skill never busts the cache.`,
  );

  // 5. The date changes: a reminder.
  heading(5, "The date changes: a reminder, not a new prompt");
  const tomorrow = dayAfter(first.date.today);
  await request(dev, "PUT", `/agents/${AGENT}/date`, { date: tomorrow });
  console.log(
    dim(`   PUT /agents/${AGENT}/date {"date":"${tomorrow}"}  (a test/demo override of today's date)`),
  );
  const dated = await say(dev, "What is the date today?");
  check(dated.reminder?.includes(`Today is ${tomorrow}.`) === true, "the turn carried a date reminder");
  console.log("   The reminder that went with the user's message (not stored, not in the system prompt):");
  quote(dated.reminder ?? "");
  check((await getPrompt(dev)) === frozen, "the prompt is unchanged by the new date");
  ok(`Prompt still sha256 ${short(frozenHash)}…, byte-identical.`);

  // 6. Restart the local runtime: a cold start on the same state.
  heading(6, "Restart: stop the local runtime, start it again on the same state");
  const oldPid = dev.pid;
  await dev.stop();
  check(!groupAlive(oldPid), "the old wrangler and workerd are gone");
  console.log(dim(`   Stopped wrangler dev and workerd (process group ${oldPid}).`));
  dev = await start("Starting again:");
  const cold = await getPrompt(dev);
  check(cold === frozen, "the prompt after the cold start is byte-identical");
  ok(
    `Prompt after the cold start: sha256 ${short(sha256(cold))}…, byte-identical to the one before the restart.`,
  );
  const coldSnapshot = await getSnapshot(dev);
  check(coldSnapshot.reminder === dated.reminder, "the reminder is still pending after the restart");
  ok("The date reminder is still pending: it is computed against the stored prompt.");

  // 7. Refresh promotes the write.
  heading(7, "Refresh: the one deliberate rebuild");
  const refreshed = (await (await request(dev, "POST", `/agents/${AGENT}/refresh`)).json()) as RefreshResult;
  check(refreshed.changed, "the refresh changed the prompt");
  check(refreshed.prompt.includes("I prefer TypeScript"), "the refreshed prompt holds the memory write");
  check(refreshed.prompt.includes(`Today is ${tomorrow}.`), "the refreshed prompt holds the new date");
  check(refreshed.reminder === null, "no reminder after the refresh");
  check((await getPrompt(dev)) === refreshed.prompt, "the refreshed prompt is the one served now");
  console.log(
    dim(
      `   POST /agents/${AGENT}/refresh → sha256 ${short(refreshed.previousSha256)}… → ${short(refreshed.promptSha256)}…`,
    ),
  );
  console.log("   The sections that changed:");
  for (const [index, section] of changedSections(frozen, refreshed.prompt).entries()) {
    if (index > 0) quote("");
    quote(section);
  }
  ok(
    "The write and the date are in the prompt now; no reminder is pending. From here the new prompt is cached.",
  );

  // 8. An edit: a branch in the conversation's message tree.
  heading(8, `Edit a message: a branch ${dim(`(POST /agents/${AGENT}/edit)`)}`);
  console.log(dim(`   Editing "How do I run the tests?" (message ${question.userMessageId.slice(0, 8)}):`));
  const edited = (await (
    await request(dev, "POST", `/agents/${AGENT}/edit`, {
      messageId: question.userMessageId,
      message: "Where does the data live?",
    })
  ).json()) as ChatResult;
  console.log(`   ${bold("you")}   › Where does the data live?  ${dim("(the edit)")}`);
  console.log(`   ${bold("agent")} › ${edited.reply.split("\n")[0]}`);
  check(edited.parentId === question.parentId, "the edit is stored under the edited message's parent");
  const branched = (await getSnapshot(dev)).sessions[0];
  const branchPoint = branched?.tree.find((node) => node.id === question.parentId);
  check(branchPoint?.children === 2, "the message before the edit has two children: a branch");
  ok(
    `Message ${short(question.parentId ?? "")} now has 2 branches; the new one is the active path (${edited.transcriptLength} messages), the old one stays stored (${branched?.storedMessages} in the tree).`,
  );

  // 9. Compaction.
  heading(9, "Compaction: past the threshold, the middle of the conversation becomes a summary");
  let compacted: ChatResult | undefined;
  for (let index = 1; index <= 30 && compacted === undefined; index++) {
    const turn = (await (
      await request(dev, "POST", `/agents/${AGENT}/chat`, {
        message: `Remember that note ${index} of this demo is about ${"prefix caching and frozen prompts, ".repeat(4)}`,
      })
    ).json()) as ChatResult;
    console.log(
      dim(
        `   turn ${index}: ${turn.transcriptLength} messages on the path, ~${turn.historyTokens} of ${turn.compactAfterTokens} tokens`,
      ),
    );
    if (turn.compaction !== null) compacted = turn;
  }
  check(compacted?.compaction != null, "a compaction ran within 30 turns");
  const compaction = compacted?.compaction;
  console.log(
    `   Compacted messages ${short(compaction?.fromMessageId ?? "")}…${short(compaction?.toMessageId ?? "")} into this summary (stored messages unchanged):`,
  );
  quote(compaction?.summary ?? "");
  const following = await say(dev, "What do you remember about me?");
  const summaryAt = following.sentMessageIds.findIndex((id) => id.startsWith("compaction_"));
  check(summaryAt !== -1, "the next turn sent the summary in place of the compacted messages");
  ok(
    `The next turn sent ${following.sentMessageIds.length} messages: the first ${summaryAt}, the summary, then the newest ${following.sentMessageIds.length - summaryAt - 1} (~${following.historyTokens} tokens with the prompt).`,
  );
  ok(
    `The frozen prompt was refreshed at the compaction (sha256 ${short(compaction?.promptSha256 ?? "")}…): the history's prefix changed anyway, and the memory writes it summarised are in the prompt now.`,
  );

  // 10. The inspector.
  heading(10, "See it in the inspector page");
  if (KEEP) {
    console.log(
      `   Open ${bold(`${dev.url}/agents/${AGENT}`)}  (Ctrl-C stops the server and removes its state)`,
    );
    console.log(
      `   It asks for this run's token: in the browser console run ${bold(`document.cookie = "contextblocks_inspector=${INSPECTOR_TOKEN}; path=/"`)} and reload,`,
    );
    console.log(
      `   or: curl -H 'authorization: Bearer ${INSPECTOR_TOKEN}' ${dev.url}/agents/${AGENT}/inspector/`,
    );
    waitingForCtrlC = true;
    await new Promise(() => undefined);
  }
  console.log(
    `   Set INSPECTOR_TOKEN in .dev.vars, run ${bold("pnpm --filter worker-agent dev")} and open ${bold(`http://127.0.0.1:8787/agents/${AGENT}`)} with that token as the contextblocks_inspector cookie,`,
  );
  console.log(`   or ${bold("pnpm demo --keep")} to keep this run's server up and open the URL it prints.`);

  const pid = dev.pid;
  await dev.stop();
  check(!groupAlive(pid), "no wrangler or workerd process is left");
  cleanUpNow();
  console.log(
    `\n${green("Done")} in ${seconds(started)}. wrangler and workerd stopped, temporary state removed.`,
  );
}

function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

/** The sections of `after` that are not in `before`, whole. */
function changedSections(before: string, after: string): string[] {
  const old = new Set(parseSections(before).map((section) => section.text));
  return parseSections(after)
    .map((section) => section.text)
    .filter((section) => !old.has(section));
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`\n${yellow("Demo failed:")} ${message}`);
    await stopAll();
    cleanUpNow();
    process.exit(1);
  },
);
