import { DurableObject } from "cloudflare:workers";
import {
  isReminderPart,
  loadedEntriesFromMessages,
  prepareContextTurn,
  toolOutcomeOf,
} from "@contextblocks/ai";
import { type ContextBlocks, parseSections, renderSection, usagePercent } from "@contextblocks/core";
import type { PgPoolLike } from "@contextblocks/sql";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import {
  agentDate,
  createAgentContext,
  DATE_OVERRIDE_KEY,
  fixedDateFrom,
  type PostgresStore,
  seedKnowledge,
} from "./agent-context.js";
import { sha256Hex } from "./hash.js";
import { chooseModel, OFFLINE_NOTE } from "./model.js";
import { AgentSettings } from "./settings.js";
import type {
  AgentSnapshot,
  BlockView,
  ChatResult,
  RefreshResult,
  ToolCallView,
  TranscriptLine,
} from "./snapshot.js";
import { Transcript } from "./transcript.js";

/** Tool steps a turn may take before the model must answer. */
const MAX_STEPS = 5;
/** Transcript messages the inspector shows. */
const RECENT_MESSAGES = 12;

/**
 * One agent: a Durable Object with SQLite storage holding its blocks, its frozen prompt, its knowledge index
 * and its transcript. The Worker validates requests and calls these methods over RPC.
 */
export class AgentObject extends DurableObject<Env> {
  private readonly settings: AgentSettings;
  private readonly transcript: Transcript;
  private readonly context: ContextBlocks;
  /** `AGENT_DATE`, when configured: a fixed "today" (the screenshot test uses it). */
  private readonly fixedDate: string | undefined;
  /** Turns run one at a time: each reads the transcript and appends to it. */
  private turns: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.settings = new AgentSettings(ctx.storage);
    this.transcript = new Transcript(ctx.storage);
    this.fixedDate = fixedDateFrom(env.AGENT_DATE);
    this.context = createAgentContext(
      ctx.storage,
      env.SKILLS_BUCKET,
      this.settings,
      this.fixedDate,
      postgresStore(ctx, env),
    );
    // First start: index the seed entries, then freeze. Cold start: the stored prompt, as it was.
    void ctx.blockConcurrencyWhile(async () => {
      await seedKnowledge(this.context, this.settings);
      await this.context.freezeSystemPrompt();
    });
  }

  /** The frozen system prompt, byte for byte what the model gets. */
  async prompt(): Promise<string> {
    return this.context.freezeSystemPrompt();
  }

  /** Everything the inspector and `GET /agents/:id/blocks` show. */
  async snapshot(agent: string): Promise<AgentSnapshot> {
    const prompt = await this.context.freezeSystemPrompt();
    await this.context.load();
    const reminder = await this.context.reminder();
    const frozenSections = new Set(parseSections(prompt).map((section) => section.text));
    const loaded = loadedEntriesFromMessages(this.transcript.read());
    const blocks: BlockView[] = this.context.getBlocks().map((block) => ({
      label: block.label,
      ...(block.description !== undefined ? { description: block.description } : {}),
      kind: block.kind,
      whenChanged: block.whenChanged,
      content: block.content,
      tokens: block.tokens,
      ...(block.maxTokens !== undefined
        ? { maxTokens: block.maxTokens, usagePercent: usagePercent(block.tokens, block.maxTokens) }
        : {}),
      writable: block.writable,
      matchesFrozenPrompt: frozenSections.has(renderSection(block)),
      ...(block.kind === "loadable"
        ? { loaded: loaded.filter((entry) => entry.label === block.label).map((entry) => entry.key) }
        : {}),
    }));
    const chosen = chooseModel(this.env);
    return {
      agent,
      model: chosen.name,
      offline: chosen.offline,
      date: {
        today: agentDate(this.settings, this.fixedDate),
        override: this.settings.get(DATE_OVERRIDE_KEY),
      },
      prompt,
      promptSha256: await sha256Hex(prompt),
      promptTokens: this.context.estimateTokens(prompt),
      reminder,
      blocks,
      tools: this.context.toolSpecs().map(({ name, description, inputSchema }) => ({
        name,
        description,
        inputSchema,
      })),
      transcript: { count: this.transcript.count(), recent: recentLines(this.transcript.read()) },
    };
  }

  /** Runs one turn: the frozen prompt, the transcript plus this message (and any reminder), the tools. */
  chat(agent: string, message: string): Promise<ChatResult> {
    const turn = this.turns.then(() => this.runTurn(agent, message));
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  /** Re-renders from every block and stores the new prompt: the one deliberate cache bust. */
  async refresh(agent: string): Promise<RefreshResult> {
    const before = await this.context.freezeSystemPrompt();
    const prompt = await this.context.refreshSystemPrompt();
    const promptSha256 = await sha256Hex(prompt);
    return {
      agent,
      prompt,
      promptSha256,
      previousSha256: await sha256Hex(before),
      changed: prompt !== before,
      reminder: await this.context.reminder(),
    };
  }

  /** Sets (or with `null` clears) the date the environment block reports. For the demo and the tests. */
  async setDate(
    agent: string,
    date: string | null,
  ): Promise<{ agent: string; today: string; override: string | null }> {
    if (date === null) this.settings.delete(DATE_OVERRIDE_KEY);
    else this.settings.set(DATE_OVERRIDE_KEY, date);
    return { agent, today: agentDate(this.settings, this.fixedDate), override: date };
  }

  private async runTurn(agent: string, message: string): Promise<ChatResult> {
    const chosen = chooseModel(this.env);
    const history = this.transcript.read();
    const userMessage: ModelMessage = { role: "user", content: message };
    const turn = await prepareContextTurn(this.context, [...history, userMessage]);
    const result = await generateText({
      model: chosen.model,
      system: turn.system,
      messages: turn.messages,
      tools: turn.tools,
      stopWhen: stepCountIs(MAX_STEPS),
    });
    // The reminder travelled with this request only; the transcript keeps the user's own words.
    this.transcript.append([userMessage, ...result.response.messages]);
    const toolCalls: ToolCallView[] = result.steps.flatMap((step) =>
      step.toolResults.flatMap((toolResult) =>
        toolResult
          ? [
              {
                tool: toolResult.toolName,
                input: toolResult.input,
                output: toolOutcomeOf(toolResult.output).text,
                isError: toolOutcomeOf(toolResult.output).isError,
              },
            ]
          : [],
      ),
    );
    const prompt = await this.context.freezeSystemPrompt();
    return {
      agent,
      reminder: sentReminder(turn.messages.at(-1)),
      model: chosen.name,
      offline: chosen.offline,
      ...(chosen.offline ? { note: OFFLINE_NOTE } : {}),
      reply: result.text,
      toolCalls,
      systemIsFrozenPrompt: turn.system === prompt,
      promptSha256: await sha256Hex(prompt),
      transcriptLength: this.transcript.count(),
    };
  }
}

/** The reminder `prepareContextTurn` attached to the user's message, or `null`. */
function sentReminder(message: ModelMessage | undefined): string | null {
  if (message?.role !== "user" || typeof message.content === "string") return null;
  const last = message.content.at(-1);
  return last?.type === "text" && isReminderPart(last) ? last.text : null;
}

function recentLines(messages: readonly ModelMessage[]): TranscriptLine[] {
  return messages
    .slice(-RECENT_MESSAGES)
    .map((message) => ({ role: message.role, text: messageText(message) }));
}

function messageText(message: ModelMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => {
      switch (part.type) {
        case "text":
          return part.text;
        case "tool-call":
          return `→ ${part.toolName} ${JSON.stringify(part.input)}`;
        case "tool-result":
          return `← ${part.toolName}: ${part.output.type === "text" || part.output.type === "error-text" ? part.output.value : JSON.stringify(part.output)}`;
        default:
          return `[${part.type}]`;
      }
    })
    .join("\n");
}

/**
 * With a Hyperdrive binding (wrangler.postgres.jsonc), the agent's blocks and prompt live in Postgres, in
 * this object's namespace (its id, as seed 004 uses it for a session). Each statement (each transaction for
 * a batch) runs on a `pg.Client` opened for it and closed after, as Cloudflare advises for Hyperdrive, which
 * keeps the real connections pooled: no socket is kept open in the object between requests. `pg` is loaded
 * on first use only, so the SQLite configuration never loads it.
 */
function postgresStore(ctx: DurableObjectState, env: Env): PostgresStore | undefined {
  const hyperdrive = (env as Env & { HYPERDRIVE?: { connectionString: string } }).HYPERDRIVE;
  if (hyperdrive === undefined) return undefined;
  const open = async () => {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: hyperdrive.connectionString });
    await client.connect();
    return client;
  };
  // The part of a pg.Pool that @contextblocks/sql's fromPg uses: a "pool" that opens a client per use.
  const client: PgPoolLike = {
    async query(text, values) {
      const connection = await open();
      try {
        return await connection.query(text, values);
      } finally {
        await connection.end();
      }
    },
    async connect() {
      const connection = await open();
      return Object.assign(connection, {
        release: () => {
          void connection.end();
        },
      });
    },
    idleCount: 0,
  };
  return { client, namespace: ctx.id.toString() };
}
