/**
 * Prefix-cache share over a realistic session.
 *
 * A scripted conversation (memory writes and knowledge searches through the tools, an environment block
 * that changes once, a compaction halfway with a refresh) is played through real `generateText` calls
 * against a scripted `MockLanguageModelV3`, once per system:
 * - contextblocks: `prepareContextTurn` (frozen prompt, tools, reminder after the cached prefix);
 * - the same through `contextMiddleware`, the conversation from a history plugin;
 * - re-rendering the blocks into the system prompt every turn (what many agents do);
 * - `agents/context`: `freezeSystemPrompt()`, `tools()`, `reminder()` at the end of the newest user message.
 * Every request the model receives (tools, system, messages) is tokenized with o200k; a request's cached
 * tokens are its longest common token prefix with the previous request, counted from 1,024 tokens on.
 *
 * Run alone: `node --import tsx src/prefix-cache.ts [--smoke]`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { breakpointCache } from "./cost-model/breakpoint-cache.js";
import { formatInteger, formatPercent, formatRatio, markdownTable } from "./markdown.js";
import { ScriptedModel } from "./prefix-cache/mock-model.js";
import { cachedTokens, MINIMUM_CACHED_PREFIX, requestText, tokenize } from "./prefix-cache/request-text.js";
import { environmentValue, type ScriptedSession, scriptedSession } from "./prefix-cache/session.js";
import { agentsSystem } from "./prefix-cache/systems/agents.js";
import { contextblocksSystem } from "./prefix-cache/systems/contextblocks.js";
import { middlewareSystem, middlewareWithoutHintsSystem } from "./prefix-cache/systems/middleware.js";
import { rerenderSystem } from "./prefix-cache/systems/rerender.js";
import type { PromptSystem, SessionWorld } from "./prefix-cache/systems/system.js";

/** Price of a cached input token relative to an uncached one (OpenAI and Anthropic: about a tenth). */
export const CACHED_PRICE = 0.1;

export interface RequestFigure {
  turn: number;
  step: number;
  tokens: number;
  cached: number;
  /** Anthropic-style cache (only at the request's `cacheControl` breakpoints): tokens read and written. */
  breakpointRead: number;
  breakpointWritten: number;
}

export interface SystemFigures {
  name: string;
  requests: RequestFigure[];
  inputTokens: number;
  cachedTokens: number;
  /** cached / input. */
  cachedShare: number;
  /** Input cost with the cache, relative to the same requests without any cache (1 = no saving). */
  relativeCost: number;
  /** o200k tokens of the tool results the system returned over the session (each counted once). */
  toolResultTokens: number;
}

export interface PrefixCacheResult {
  turns: number;
  systems: SystemFigures[];
  markdown: string;
}

/** Plays the session against one system and measures every request the model received. */
export async function playSession(
  session: ScriptedSession,
  create: (world: SessionWorld) => Promise<PromptSystem>,
): Promise<SystemFigures> {
  const world: SessionWorld = { environment: environmentValue(1) };
  const system = await create(world);
  const model = new ScriptedModel();
  const languageModel = system.wrapModel?.(model.model) ?? model.model;
  const requestTurns: number[] = [];
  let toolResultTokens = 0;
  let transcript: ModelMessage[] = [];
  try {
    for (const turn of session.turns) {
      if (turn.number === session.environmentChangeBefore) world.environment = environmentValue(2);
      if (turn.number === session.compactionBefore) {
        transcript = [
          { role: "user", content: session.compactionSummary },
          { role: "assistant", content: "Thanks, I have the summary. Let's continue." },
        ];
        await system.compacted();
      }
      transcript.push({ role: "user", content: turn.user });
      model.play(turn);
      const before = model.calls.length;
      const request = await system.request(transcript);
      const result = await generateText({
        model: languageModel,
        ...(request.system === undefined ? {} : { system: request.system }),
        messages: request.messages,
        tools: request.tools,
        stopWhen: stepCountIs(4),
      });
      for (let call = before; call < model.calls.length; call += 1) requestTurns.push(turn.number);
      if (turn.toolCall) {
        const output = checkToolRan(system.name, turn.number, result.steps[0]?.toolResults ?? []);
        toolResultTokens += tokenize(output).length;
      }
      transcript.push(...result.response.messages);
    }
  } finally {
    system.close();
  }

  const requests: RequestFigure[] = [];
  let previous: number[] | undefined;
  let step = 0;
  const tokenLists = model.calls.map((call) => tokenize(requestText(call)));
  const breakpoints = breakpointCache(
    model.calls.map((call, index) => ({
      tokens: tokenLists[index]!,
      breakpoints: breakpointPositions(call),
    })),
    MINIMUM_CACHED_PREFIX,
  );
  model.calls.forEach((_call, index) => {
    const tokens = tokenLists[index]!;
    const turn = requestTurns[index]!;
    step = index > 0 && requestTurns[index - 1] === turn ? step + 1 : 1;
    requests.push({
      turn,
      step,
      tokens: tokens.length,
      cached: cachedTokens(previous, tokens),
      breakpointRead: breakpoints[index]!.read,
      breakpointWritten: breakpoints[index]!.written,
    });
    previous = tokens;
  });
  const inputTokens = requests.reduce((sum, request) => sum + request.tokens, 0);
  const cached = requests.reduce((sum, request) => sum + request.cached, 0);
  return {
    name: system.name,
    requests,
    inputTokens,
    cachedTokens: cached,
    cachedShare: cached / inputTokens,
    relativeCost: (inputTokens - cached + CACHED_PRICE * cached) / inputTokens,
    toolResultTokens,
  };
}

/** Token positions where the request's Anthropic breakpoints end: after each message that carries one. */
function breakpointPositions(call: LanguageModelV3CallOptions): number[] {
  return call.prompt.flatMap((message, index) =>
    message.providerOptions?.anthropic?.cacheControl === undefined
      ? []
      : [tokenize(requestText({ ...call, prompt: call.prompt.slice(0, index + 1) })).length],
  );
}

/** A scripted tool call that failed would make the comparison meaningless: stop loudly. Returns its output. */
function checkToolRan(system: string, turn: number, results: readonly { output: unknown }[]): string {
  const output = results[0]?.output;
  // contextblocks tools answer an outcome ({ isError, text }); agents/context's answer a string.
  const outcome =
    typeof output === "object" && output !== null && "isError" in output
      ? (output as { isError: boolean; text: string })
      : { isError: typeof output !== "string" || output.startsWith("Error"), text: String(output) };
  if (outcome.isError) {
    throw new Error(`prefix-cache: ${system}, turn ${turn}: the scripted tool call failed: ${outcome.text}`);
  }
  return outcome.text;
}

export async function run(options: { smoke?: boolean } = {}): Promise<PrefixCacheResult> {
  const turns = options.smoke ? 8 : 50;
  const session = scriptedSession(turns);
  const systems = [
    await playSession(session, contextblocksSystem),
    await playSession(session, middlewareSystem),
    await playSession(session, middlewareWithoutHintsSystem),
    await playSession(session, rerenderSystem),
    await playSession(session, agentsSystem),
  ];
  const ours = systems[0]!;
  const table = markdownTable(
    [
      "system",
      "requests",
      "input tokens",
      "cached tokens",
      "cached share",
      "input cost vs no cache",
      "cost vs no cache ÷ contextblocks",
      "input tokens ÷ contextblocks",
    ],
    systems.map((system) => [
      system.name,
      String(system.requests.length),
      formatInteger(system.inputTokens),
      formatInteger(system.cachedTokens),
      formatPercent(system.cachedShare),
      formatPercent(system.relativeCost),
      formatRatio(system.relativeCost, ours.relativeCost),
      formatRatio(system.inputTokens, ours.inputTokens),
    ]),
  );
  const misses = systems.map((system) => {
    const missed = system.requests.filter((request, index) => index > 0 && request.cached === 0);
    const where = missed.map((request) => `${request.turn}.${request.step}`).join(", ");
    return `- ${system.name}: ${missed.length} of ${system.requests.length - 1} follow-up requests served nothing from the cache${
      missed.length > 0 ? ` (turn.step: ${where})` : ""
    }.`;
  });
  const markdown = [
    `${turns} turns; a turn with a tool call makes two model requests. The environment block changes before ` +
      `turn ${session.environmentChangeBefore}; the transcript is compacted (and the prompt refreshed) before turn ` +
      `${session.compactionBefore}. Cached = longest common o200k token prefix with the previous request, ` +
      `counted from ${formatInteger(MINIMUM_CACHED_PREFIX)} tokens; cost at ${CACHED_PRICE}× for cached input tokens, ` +
      "relative to the same requests with no cache.",
    "",
    table,
    "",
    ...verdicts(ours, systems.slice(1)),
    "",
    "Requests that missed the cache entirely:",
    ...misses,
  ].join("\n");
  return { turns, systems, markdown };
}

/**
 * Plain statements of where contextblocks stands against each other system: the cache (cost relative to no
 * cache, which does not depend on how much is sent) and the input cost in tokens (which does).
 */
function verdicts(ours: SystemFigures, others: readonly SystemFigures[]): string[] {
  const lines: string[] = [];
  const cost = (system: SystemFigures) => system.relativeCost * system.inputTokens;
  for (const other of others) {
    const points = (ours.relativeCost - other.relativeCost) * 100;
    lines.push(
      points >= 0.05
        ? `- **contextblocks is behind ${other.name} on the cache**: it pays ${formatPercent(ours.relativeCost)} ` +
            `of its uncached input cost, ${other.name} ${formatPercent(other.relativeCost)} (${points.toFixed(1)} points).`
        : `- Cache: contextblocks pays ${formatPercent(ours.relativeCost)} of its uncached input cost, ` +
            `${other.name} ${formatPercent(other.relativeCost)}.`,
    );
    if (cost(ours) > cost(other) * 1.005) {
      lines.push(
        `- **contextblocks is behind ${other.name} on input cost**: it sends ` +
          `${formatRatio(ours.inputTokens, other.inputTokens)} the input tokens and pays ` +
          `${formatRatio(cost(ours), cost(other))} as much. Its tool results total ` +
          `${formatInteger(ours.toolResultTokens)} tokens against ${formatInteger(other.toolResultTokens)}, and ` +
          "every later request carries them.",
      );
    }
  }
  return lines;
}

/** Per-request figures as CSV, for looking at where each system lost the cache. */
export function requestsCsv(result: PrefixCacheResult): string {
  const lines = ["system,turn,step,tokens,cached,breakpoint_read,breakpoint_written"];
  for (const system of result.systems) {
    for (const request of system.requests) {
      lines.push(
        `${system.name},${request.turn},${request.step},${request.tokens},${request.cached},${request.breakpointRead},${request.breakpointWritten}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await run({ smoke: process.argv.includes("--smoke") });
  const directory = new URL("../out/", import.meta.url);
  mkdirSync(directory, { recursive: true });
  writeFileSync(new URL("prefix-cache-requests.csv", directory), requestsCsv(result));
  console.log(result.markdown);
}
