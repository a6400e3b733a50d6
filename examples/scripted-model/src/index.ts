import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { estimateTokens, parseSections, REMINDER_PREAMBLE } from "@contextblocks/core";

/** The name the offline model reports everywhere: in HTTP responses, the inspector and its own replies. */
export const SCRIPTED_MODEL_ID = "scripted-offline";

/** Every reply of the scripted model starts with this, so no one mistakes it for a real model. */
export const SCRIPTED_REPLY_PREFIX = "(offline scripted model) ";

export interface ScriptedModelOptions {
  /** The writable block "remember …" appends to. Default `"memory"`. */
  memoryLabel?: string;
  /** The searchable block questions go to. Default `"knowledge"`. */
  knowledgeLabel?: string;
  /** The block that holds today's date. Default `"environment"`. */
  environmentLabel?: string;
  /** The loadable block "load the X skill" / "unload the X skill" go to. Default `"skills"`. */
  skillsLabel?: string;
}

/**
 * An offline, deterministic language model (a real `LanguageModelV3`, not a test mock) that exercises the
 * context tools so the whole flow runs without an API key or a network:
 *
 * - "remember …" / "note that …": calls `set_context` (append) on the memory block;
 * - a question about the date: answers from the environment block, preferring a reminder's newer copy;
 * - "what do you remember?": answers from the memory section of the system prompt and the
 *   `set_context` calls in the transcript (a write reaches the next turn as a reminder on the user's message,
 *   and the system prompt only at the next refresh);
 * - "load the X skill" / "unload the X skill": calls `load_context` / `unload_context` on the skills block;
 * - any other question: calls `search_context` on the knowledge block and answers from the matches;
 * - a compaction prompt (`createCompactFunction` of `@contextblocks/sessions`): a summary under the four
 *   headings it asks for, built from the turns it quotes (and the previous summary when there is one);
 * - after tool results: a final text built from them.
 *
 * It reads only what a real model would see: the system prompt, the messages and the tool definitions.
 */
export class ScriptedModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider = "contextblocks-example";
  readonly modelId = SCRIPTED_MODEL_ID;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  private readonly memoryLabel: string;
  private readonly knowledgeLabel: string;
  private readonly environmentLabel: string;
  private readonly skillsLabel: string;

  constructor(options: ScriptedModelOptions = {}) {
    this.memoryLabel = options.memoryLabel ?? "memory";
    this.knowledgeLabel = options.knowledgeLabel ?? "knowledge";
    this.environmentLabel = options.environmentLabel ?? "environment";
    this.skillsLabel = options.skillsLabel ?? "skills";
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const content = this.respond(options);
    const calledTools = content.some((part) => part.type === "tool-call");
    return {
      content,
      finishReason: { unified: calledTools ? "tool-calls" : "stop", raw: undefined },
      usage: usageOf(options.prompt, content),
      warnings: [],
      response: { modelId: SCRIPTED_MODEL_ID },
    };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const result = await this.doGenerate(options);
    const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
    for (const [index, part] of result.content.entries()) {
      if (part.type === "text") {
        const id = `text-${index}`;
        parts.push(
          { type: "text-start", id },
          { type: "text-delta", id, delta: part.text },
          { type: "text-end", id },
        );
      } else if (part.type === "tool-call") {
        parts.push(part);
      }
    }
    parts.push({ type: "finish", usage: result.usage, finishReason: result.finishReason });
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  private respond(options: LanguageModelV3CallOptions): LanguageModelV3Content[] {
    const { prompt } = options;
    const lastUser = findLastIndex(prompt, (message) => message.role === "user");
    const results = toolResultsAfter(prompt, lastUser);
    if (results.length > 0) return [text(this.answerFromResults(results))];

    const { words, reminder } = splitReminder(userText(prompt[lastUser]));
    const summary = summaryRequest(words);
    if (summary !== null) return [text(summarize(summary))];
    const system = prompt
      .filter((message) => message.role === "system")
      .map((message) => message.content)
      .join("\n\n");
    const tools = toolLabels(options);

    const skill = skillRequest(words);
    if (skill !== null) {
      const tool = skill.unload ? "unload_context" : "load_context";
      if (!tools[tool]?.includes(this.skillsLabel)) {
        return [
          text(
            `I have no loadable "${this.skillsLabel}" block to ${skill.unload ? "unload" : "load"} skills from.`,
          ),
        ];
      }
      return [this.toolCall(tool, { label: this.skillsLabel, key: skill.key })];
    }
    const fact = rememberedFact(words);
    if (fact !== null) {
      if (!tools.set_context?.includes(this.memoryLabel)) {
        return [text(`I would remember that, but I have no writable "${this.memoryLabel}" block.`)];
      }
      return [
        this.toolCall("set_context", { label: this.memoryLabel, content: `- ${fact}`, action: "append" }),
      ];
    }
    if (/\b(date|today|what day)\b/i.test(words)) {
      return [text(this.answerDate(system, reminder))];
    }
    if (/\bwhat do you (remember|know about me)\b/i.test(words)) {
      return [text(this.answerMemory(system, prompt))];
    }
    if (isQuestion(words)) {
      if (!tools.search_context?.includes(this.knowledgeLabel)) {
        return [text(`I have no searchable "${this.knowledgeLabel}" block to look that up in.`)];
      }
      return [this.toolCall("search_context", { label: this.knowledgeLabel, query: words })];
    }
    return [
      text(
        'I am the offline scripted model: say "remember …" and I write it to memory with set_context, ' +
          "ask a question and I search the knowledge block with search_context, or ask what the date is.",
      ),
    ];
  }

  private answerFromResults(results: ToolResult[]): string {
    return results
      .map((result) => {
        if (result.failed) return `The ${result.toolName} tool said: ${result.output}`;
        if (result.toolName === "set_context") {
          return `Noted: I wrote that to my ${this.memoryLabel} block (set_context: "${result.output}"). It is stored now: my next turn sees it in a reminder on your message, and my system prompt takes it at the next refresh.`;
        }
        if (result.toolName === "search_context") {
          if (result.output === "No results found.")
            return `I found nothing about that in my ${this.knowledgeLabel} block.`;
          return `From my ${this.knowledgeLabel} block (search_context):\n${result.output}`;
        }
        if (result.toolName === "load_context") {
          const firstLine = result.output.split("\n", 1)[0] ?? "";
          return `Loaded a skill from my ${this.skillsLabel} block (load_context, ${result.output.length} characters), starting: ${firstLine}`;
        }
        return `${result.toolName}: ${result.output}`;
      })
      .join("\n\n");
  }

  private answerDate(system: string, reminder: string): string {
    const fromReminder = sectionContent(reminder, this.environmentLabel);
    if (fromReminder !== null) {
      return `${fromReminder.trim()} (from a reminder: the ${this.environmentLabel} block changed after my system prompt was frozen, so its newer value came with your message)`;
    }
    const fromPrompt = sectionContent(system, this.environmentLabel);
    if (fromPrompt !== null)
      return `${fromPrompt.trim()} (from the ${this.environmentLabel} block of my system prompt)`;
    return "I do not know today's date: I have no environment block.";
  }

  private answerMemory(system: string, prompt: LanguageModelV3Prompt): string {
    const frozen = (sectionContent(system, this.memoryLabel) ?? "").trim();
    const written = prompt.flatMap((message) =>
      message.role === "assistant"
        ? message.content.flatMap((part) => {
            if (part.type !== "tool-call" || part.toolName !== "set_context") return [];
            const input = part.input as { label?: unknown; content?: unknown };
            return input.label === this.memoryLabel && typeof input.content === "string"
              ? [input.content]
              : [];
          })
        : [],
    );
    const lines: string[] = [];
    if (frozen.length > 0) lines.push(`In my system prompt's ${this.memoryLabel} block:\n${frozen}`);
    if (written.length > 0)
      lines.push(`Written during our conversation (set_context):\n${written.join("\n")}`);
    return lines.length > 0 ? lines.join("\n\n") : "Nothing yet: my memory block is empty.";
  }

  private toolCall(toolName: string, input: Record<string, unknown>): LanguageModelV3Content {
    const toolCallId = `scripted-${crypto.randomUUID()}`;
    return { type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) };
  }
}

interface ToolResult {
  toolName: string;
  output: string;
  /** An error output (the tool failed), read from the output's type, not its words. */
  failed: boolean;
}

function text(body: string): LanguageModelV3Content {
  return { type: "text", text: SCRIPTED_REPLY_PREFIX + body };
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index] as T)) return index;
  return -1;
}

function userText(message: LanguageModelV3Prompt[number] | undefined): string {
  if (message?.role !== "user") return "";
  return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/** The user's own words, and the reminder `prepareContextTurn` attached after them (or ""). */
function splitReminder(message: string): { words: string; reminder: string } {
  const at = message.indexOf(REMINDER_PREAMBLE);
  if (at === -1) return { words: message.trim(), reminder: "" };
  return { words: message.slice(0, at).trim(), reminder: message.slice(at) };
}

function toolResultsAfter(prompt: LanguageModelV3Prompt, index: number): ToolResult[] {
  return prompt.slice(index + 1).flatMap((message) =>
    message.role === "tool"
      ? message.content.flatMap((part) =>
          part.type === "tool-result"
            ? [
                {
                  toolName: part.toolName,
                  output: outputText(part.output),
                  failed: part.output.type.startsWith("error") || part.output.type === "execution-denied",
                },
              ]
            : [],
        )
      : [],
  );
}

function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    case "execution-denied":
      return `Error: denied${output.reason ? `: ${output.reason}` : ""}`;
    default:
      return JSON.stringify(output.value);
  }
}

/** The labels each tool accepts, read from the tool definitions the model was given. */
function toolLabels(options: LanguageModelV3CallOptions): Record<string, string[]> {
  const labels: Record<string, string[]> = {};
  for (const tool of options.tools ?? []) {
    if (tool.type !== "function") continue;
    const properties = (tool.inputSchema as { properties?: { label?: { enum?: unknown } } }).properties;
    const allowed = properties?.label?.enum;
    labels[tool.name] = Array.isArray(allowed) ? allowed.filter((label) => typeof label === "string") : [];
  }
  return labels;
}

/** `remember` or `note`, maybe after `please`: the rest of the message is read without a regex. */
const REMEMBER_VERB = /^(?:please\s+)?(?:remember|note)(?=[\s:,])/i;

/**
 * The fact in "remember that X", "note: X", "please remember, X". Read step by step rather than with one
 * pattern: optional whitespace groups next to each other made the old pattern backtrack.
 */
function rememberedFact(words: string): string | null {
  const verb = REMEMBER_VERB.exec(words);
  if (!verb) return null;
  let rest = words.slice(verb[0].length).trimStart();
  if (/^that\s/i.test(rest)) rest = rest.slice(4).trimStart();
  if (rest.startsWith(":") || rest.startsWith(",")) rest = rest.slice(1);
  const fact = rest.trim();
  if (!fact) return null;
  const sentence = fact.charAt(0).toUpperCase() + fact.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** "load the code-review skill" → `{ key: "code-review", unload: false }`; anything else → `null`. */
function skillRequest(words: string): { key: string; unload: boolean } | null {
  const match = /\b(un)?load\s+the\s+([\w.-]+)\s+skill\b/i.exec(words);
  const key = match?.[2];
  return key === undefined ? null : { key, unload: match?.[1] !== undefined };
}

function isQuestion(words: string): boolean {
  return (
    words.endsWith("?") ||
    /^(what|how|where|when|who|why|which|can|could|does|do|is|are|should|tell me)\b/i.test(words)
  );
}

/** The content of the section for `label` in a rendered prompt or reminder, or `null`. */
function sectionContent(rendered: string, label: string): string | null {
  const upper = label.toUpperCase();
  for (const section of parseSections(rendered)) {
    if (section.header === upper || section.header.startsWith(`${upper} `)) {
      return section.text.split("\n").slice(3).join("\n");
    }
  }
  return null;
}

function usageOf(prompt: LanguageModelV3Prompt, content: LanguageModelV3Content[]): LanguageModelV3Usage {
  const input = estimateTokens(JSON.stringify(prompt));
  const output = estimateTokens(JSON.stringify(content));
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

/** The parts of a compaction prompt: the turns to summarise and the previous summary, or `null`. */
interface SummaryRequest {
  turns: string;
  previous: string | null;
}

const FIRST_SUMMARY = "CONVERSATION TO SUMMARIZE:\n";
const PREVIOUS_SUMMARY = "PREVIOUS SUMMARY:\n";
const NEW_TURNS = "NEW TURNS TO INCORPORATE:\n";
/** Where the quoted turns end: the headings the prompt asks for come next. */
const TURNS_END = "\n\n## Topic";

/** Reads a compaction prompt by its fixed markers (found with `indexOf`, no pattern over the text). */
function summaryRequest(words: string): SummaryRequest | null {
  const first = words.indexOf(FIRST_SUMMARY);
  if (first !== -1) return { turns: between(words, first + FIRST_SUMMARY.length, TURNS_END), previous: null };
  const previousAt = words.indexOf(PREVIOUS_SUMMARY);
  const newAt = words.indexOf(NEW_TURNS);
  if (previousAt === -1 || newAt === -1 || newAt < previousAt) return null;
  return {
    turns: between(words, newAt + NEW_TURNS.length, TURNS_END),
    previous: words.slice(previousAt + PREVIOUS_SUMMARY.length, newAt).trim(),
  };
}

function between(text: string, start: number, endMarker: string): string {
  const end = text.indexOf(endMarker, start);
  return text.slice(start, end === -1 ? text.length : end);
}

/** Longest quoted line of a summary point. */
const POINT_LENGTH = 120;

/**
 * A deterministic summary under the four headings: the user's requests as key points (the previous
 * summary's points kept first), the facts written to memory, and the last request as the current state.
 */
function summarize(request: SummaryRequest): string {
  const asked: string[] = [];
  const written: string[] = [];
  for (const turn of request.turns.split("\n\n---\n\n")) {
    const lines = turn.split("\n");
    const role = lines[0]?.trim();
    if (role === "[user]") {
      const said = lines.slice(1).join(" ").trim();
      if (said) asked.push(clip(said));
    }
    lines.forEach((line, index) => {
      if (line !== "[Tool: set_context]") return;
      const input = lines[index + 1] ?? "";
      if (!input.startsWith("Input: ")) return;
      try {
        const content = (JSON.parse(input.slice("Input: ".length)) as { content?: unknown }).content;
        if (typeof content === "string") written.push(clip(content.replace(/^- /, "")));
      } catch {
        // A clipped input is not JSON: leave it out.
      }
    });
  }
  const earlier = request.previous === null ? [] : pointsOf(request.previous);
  const points = [...earlier, ...asked.map((said) => `- The user said: "${said}"`)];
  const facts = written.map((fact) => `- Written to memory: ${fact}`);
  const last = asked.at(-1);
  return [
    "Summary of the earlier conversation.",
    "",
    "## Topic",
    "A conversation with the user about contextblocks and this agent.",
    "",
    "## Key Points",
    ...(points.length + facts.length > 0 ? [...points, ...facts] : ["- Nothing of note."]),
    "",
    "## Current State",
    last === undefined ? "No request in these turns." : `The last summarised request was: "${last}"`,
    "",
    "## Open Items",
    "None recorded.",
  ].join("\n");
}

/** The bullet lines under "## Key Points" of an earlier summary. */
function pointsOf(summary: string): string[] {
  const lines = summary.split("\n");
  const start = lines.indexOf("## Key Points");
  if (start === -1) return [];
  const points: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("## ")) break;
    if (line.startsWith("- ") && line !== "- Nothing of note.") points.push(line);
  }
  return points;
}

function clip(text: string): string {
  return text.length > POINT_LENGTH ? `${text.slice(0, POINT_LENGTH)}…` : text;
}
