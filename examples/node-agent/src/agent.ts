import {
  type ContextPipeline,
  contextPipeline,
  isReminderPart,
  type RunMessage,
  runMessagesOf,
  toolOutcomeOf,
} from "@contextblocks/ai";
import { type ContextBlock, type ContextBlocks, entryKey } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { type Session, SessionBuilder, type SessionEvent } from "@contextblocks/sessions";
import { type CompactResult, createCompactFunction } from "@contextblocks/sessions/compaction";
import { sqliteBackend } from "@contextblocks/sqlite";
import { generateText, type LanguageModelMiddleware, stepCountIs, wrapLanguageModel } from "ai";
import Database from "better-sqlite3";
import { SCRIPTED_MODEL_ID, ScriptedModel } from "scripted-model";
import { agentBlocks, KNOWLEDGE_SEED, LABELS } from "./blocks.js";

/** A model `wrapLanguageModel` accepts (an AI SDK provider's model, or the scripted one). */
export type AgentModel = Parameters<typeof wrapLanguageModel>[0]["model"];
type ModelCall = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"];

const SETTINGS_TABLE = "node_agent_settings";
const DATE_OVERRIDE_KEY = "date_override";
const SEEDED_KEY = "knowledge_seeded";
const MAX_STEPS = 5;
/** Compact once the conversation (prompt included) passes this many estimated tokens. */
export const DEFAULT_COMPACT_AFTER_TOKENS = 4_000;

export interface NodeAgentOptions {
  /**
   * The model. Default: the offline scripted model (`scripted-offline`), which calls the context tools so
   * the whole flow runs without a key or a network. Pass any AI SDK model for a real one.
   */
  model?: AgentModel;
  /** Compact the conversation after a turn once prompt plus history pass this many tokens. Default 4,000. */
  compactAfter?: number;
}

export interface ToolCallView {
  tool: string;
  input: unknown;
  /** The text the model read. */
  output: string;
  /** The tool failed (core's outcome, not a guess from the text). */
  isError: boolean;
}

export interface TurnResult {
  model: string;
  reply: string;
  toolCalls: ToolCallView[];
  /** The reminder attached to this turn's user message, or `null`. */
  reminder: string | null;
  /** True when every model call of the turn carried the frozen prompt, byte for byte. */
  systemIsFrozenPrompt: boolean;
  /** The compaction that ran after this turn was stored (the prompt was refreshed with it), or `null`. */
  compaction: CompactResult | null;
}

/**
 * The worker-agent's agent in Node, on one better-sqlite3 file: a `Session` on `sqliteBackend(database)`
 * owns everything. Its blocks (`memory` and the frozen prompt are rows of `cf_agents_context_blocks`,
 * knowledge an `Fts5SearchProvider`), its conversation (a message tree in `assistant_messages`), its
 * compaction and its run state; every turn goes through `contextPipeline({ model, session })`. Closing and
 * opening the file again is a cold start.
 */
export class NodeAgent {
  /** The agent's one conversation: the default session of the file. */
  readonly session: Session;
  readonly modelName: string;
  /** The model wrapped by the session pipeline, and the tools to pass beside it. */
  readonly pipeline: ContextPipeline;
  /** What the model received on each call of the running turn: recorded by an inner middleware. */
  private sent: ModelCall[] = [];
  private turns: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly database: Database.Database,
    options: NodeAgentOptions,
  ) {
    database.exec(`CREATE TABLE IF NOT EXISTS ${SETTINGS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const model =
      options.model ??
      new ScriptedModel({
        memoryLabel: LABELS.memory,
        knowledgeLabel: LABELS.knowledge,
        environmentLabel: LABELS.environment,
      });
    const builder = new SessionBuilder(sqliteBackend(database));
    for (const { label, ...block } of agentBlocks(
      new Fts5SearchProvider(database, { label: LABELS.knowledge }),
      () => this.today(),
    )) {
      builder.withContext(label, block);
    }
    const compactAfter = options.compactAfter ?? DEFAULT_COMPACT_AFTER_TOKENS;
    this.session = builder
      .withCachedPrompt() // the frozen prompt survives restarts
      .onCompaction(
        createCompactFunction({
          // The summary is written by the agent's own model (offline: the scripted model's summary).
          summarize: async (prompt) => (await generateText({ model, prompt })).text,
          protectHead: 3, // the first turn: the user's message, the model call that used a tool, the answer
          tailTokenBudget: Math.floor(compactAfter / 5), // the newest turns, kept as they are
          minTailMessages: 2,
        }),
      )
      .compactAfter(compactAfter)
      .build();
    const record: LanguageModelMiddleware = {
      specificationVersion: "v3",
      transformParams: async ({ params }) => {
        this.sent.push(params);
        return params;
      },
    };
    // The pipeline is the outer middleware: the recorder inside it sees what the pipeline sends the model.
    this.pipeline = contextPipeline({
      model: wrapLanguageModel({ model, middleware: record }),
      session: this.session,
    });
    this.modelName = modelName(options.model);
  }

  /** The session's blocks and frozen prompt. */
  get context(): ContextBlocks {
    return this.session.context;
  }

  /** Opens (or creates) the agent's database file, seeds the knowledge block once and freezes the prompt. */
  static async open(path: string, options: NodeAgentOptions = {}): Promise<NodeAgent> {
    const database = new Database(path);
    database.pragma("journal_mode = WAL");
    const agent = new NodeAgent(database, options);
    try {
      await agent.seedKnowledge();
      await agent.context.freezeSystemPrompt();
    } catch (error) {
      database.close();
      throw error;
    }
    return agent;
  }

  /** The frozen system prompt. */
  prompt(): Promise<string> {
    return this.context.freezeSystemPrompt();
  }

  /** What the next turn attaches to the user's message, or `null`. */
  reminder(): Promise<string | null> {
    return this.context.reminder();
  }

  /** Every block as stored now (which may differ from the frozen prompt). */
  async blocks(): Promise<ContextBlock[]> {
    await this.context.load();
    return this.context.getBlocks();
  }

  /** Re-renders the prompt from every block and stores it: the one deliberate cache bust. */
  refresh(): Promise<string> {
    return this.context.refreshSystemPrompt();
  }

  /** Overrides today's date (`YYYY-MM-DD`), or clears the override with `null`. For demos and tests. */
  setDate(date: string | null): void {
    if (date === null) {
      this.database.prepare(`DELETE FROM ${SETTINGS_TABLE} WHERE key = ?`).run(DATE_OVERRIDE_KEY);
    } else {
      this.setSetting(DATE_OVERRIDE_KEY, date);
    }
  }

  today(): string {
    return this.setting(DATE_OVERRIDE_KEY) ?? new Date().toISOString().slice(0, 10);
  }

  /** The conversation as the next turn sends it (compaction summaries in place), as model messages. */
  async transcript(): Promise<RunMessage[]> {
    return runMessagesOf(await this.session.getHistory());
  }

  /** One turn: the user's message through the pipeline (frozen prompt, transcript, reminder, tools). */
  chat(message: string): Promise<TurnResult> {
    const turn = this.turns.then(() => this.runTurn(message));
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  close(): void {
    this.database.close();
  }

  private async runTurn(message: string): Promise<TurnResult> {
    const frozen = await this.context.freezeSystemPrompt();
    const events: SessionEvent[] = [];
    const unsubscribe = this.session.subscribe((event) => events.push(event));
    this.sent = [];
    // Only the new message: the session adds the conversation, the blocks the rest; after each model call
    // the turn is stored (the user's words, not the reminder), and once it ends the session compacts past
    // the threshold.
    let result: Awaited<ReturnType<typeof generateText<typeof this.pipeline.tools>>>;
    try {
      result = await generateText({
        model: this.pipeline.model,
        tools: this.pipeline.tools,
        prompt: message,
        stopWhen: stepCountIs(MAX_STEPS),
      });
    } finally {
      unsubscribe();
    }
    const prompt = this.sent[0]?.prompt ?? [];
    const lastUser = prompt.filter((sent) => sent.role === "user").at(-1);
    const lastPart = lastUser?.role === "user" ? lastUser.content.at(-1) : undefined;
    const compacted = events.find((event) => event.type === "compacted");
    return {
      model: this.modelName,
      reply: result.text,
      toolCalls: result.steps.flatMap((step) =>
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
      ),
      reminder: lastPart?.type === "text" && isReminderPart(lastPart) ? lastPart.text : null,
      systemIsFrozenPrompt:
        this.sent.length > 0 &&
        this.sent.every((call) => call.prompt[0]?.role === "system" && call.prompt[0].content === frozen),
      compaction:
        compacted?.type === "compacted"
          ? {
              fromMessageId: compacted.fromMessageId,
              toMessageId: compacted.toMessageId,
              summary: compacted.summary,
            }
          : null,
    };
  }

  private async seedKnowledge(): Promise<void> {
    if (this.setting(SEEDED_KEY) !== null) return;
    for (const entry of KNOWLEDGE_SEED) {
      await this.context.setEntry(LABELS.knowledge, entryKey(entry.title, entry.content), entry.content);
    }
    this.setSetting(SEEDED_KEY, new Date().toISOString());
  }

  private setting(key: string): string | null {
    const row = this.database
      .prepare<[string], { value: string }>(`SELECT value FROM ${SETTINGS_TABLE} WHERE key = ?`)
      .get(key);
    return row?.value ?? null;
  }

  private setSetting(key: string, value: string): void {
    this.database
      .prepare(
        `INSERT INTO ${SETTINGS_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      )
      .run(key, value);
  }
}

function modelName(model: AgentModel | undefined): string {
  return model === undefined ? SCRIPTED_MODEL_ID : `${model.provider}:${model.modelId}`;
}
