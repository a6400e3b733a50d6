import {
  type ContextMiddleware,
  contextMiddleware,
  isReminderPart,
  type RunMessage,
  toolOutcomeOf,
} from "@contextblocks/ai";
import { type ContextBlock, ContextBlocks, entryKey, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import { generateText, type LanguageModelMiddleware, stepCountIs, wrapLanguageModel } from "ai";
import Database from "better-sqlite3";
import { SCRIPTED_MODEL_ID, ScriptedModel } from "scripted-model";
import { agentBlocks, KNOWLEDGE_SEED, LABELS } from "./blocks.js";
import { TranscriptHistoryProvider } from "./transcript-history.js";

/** A model `wrapLanguageModel` accepts (an AI SDK provider's model, or the scripted one). */
export type AgentModel = Parameters<typeof wrapLanguageModel>[0]["model"];
type ModelCall = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"];

const SETTINGS_TABLE = "node_agent_settings";
export const TRANSCRIPT_TABLE = "node_agent_transcript";
const DATE_OVERRIDE_KEY = "date_override";
const SEEDED_KEY = "knowledge_seeded";
const MAX_STEPS = 5;

export interface NodeAgentOptions {
  /**
   * The model. Default: the offline scripted model (`scripted-offline`), which calls the context tools so
   * the whole flow runs without a key or a network. Pass any AI SDK model for a real one.
   */
  model?: AgentModel;
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
  /** True when the request's system prompt was the frozen prompt, byte for byte. */
  systemIsFrozenPrompt: boolean;
}

/**
 * The worker-agent's agent in Node: the same blocks, on one better-sqlite3 file. Blocks without a provider
 * and the frozen prompt are `SqliteContextProvider` rows, knowledge is an `Fts5SearchProvider`, and the
 * transcript is a table of the same file. Closing and opening the file again is a cold start.
 */
export class NodeAgent {
  readonly context: ContextBlocks;
  readonly modelName: string;
  /** The run pipeline: the context first, then the transcript as the loading history provider. */
  readonly middleware: ContextMiddleware;
  private readonly history: TranscriptHistoryProvider;
  private readonly model: AgentModel;
  /** What the model received on the last call: the pipeline's output, recorded by an inner middleware. */
  private lastCall: ModelCall | undefined;
  private turns: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly database: Database.Database,
    options: NodeAgentOptions,
  ) {
    database.exec(`CREATE TABLE IF NOT EXISTS ${SETTINGS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    this.context = new ContextBlocks(
      agentBlocks(new Fts5SearchProvider(database, { label: LABELS.knowledge }), () => this.today()),
      new SqliteContextProvider(database, SYSTEM_PROMPT_LABEL),
      (label) => new SqliteContextProvider(database, label),
    );
    this.history = new TranscriptHistoryProvider(database, TRANSCRIPT_TABLE);
    this.middleware = contextMiddleware({ context: this.context, providers: [this.history] });
    const record: LanguageModelMiddleware = {
      specificationVersion: "v3",
      transformParams: async ({ params }) => {
        this.lastCall = params;
        return params;
      },
    };
    this.model = wrapLanguageModel({
      model:
        options.model ??
        new ScriptedModel({
          memoryLabel: LABELS.memory,
          knowledgeLabel: LABELS.knowledge,
          environmentLabel: LABELS.environment,
        }),
      // The first middleware is the outer one: the recorder sees what the pipeline sends to the model.
      middleware: [this.middleware, record],
    });
    this.modelName = modelName(options.model);
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

  /** The stored conversation, oldest first. */
  transcript(): RunMessage[] {
    return this.history.messages();
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
    // Only the new message: the transcript provider adds the conversation, the context the rest, and the
    // middleware stores this turn (the user's words, not the reminder) after each model call.
    const result = await generateText({
      model: this.model,
      tools: this.middleware.tools,
      prompt: message,
      stopWhen: stepCountIs(MAX_STEPS),
    });
    const prompt = this.lastCall?.prompt ?? [];
    const lastUser = prompt.filter((sent) => sent.role === "user").at(-1);
    const lastPart = lastUser?.role === "user" ? lastUser.content.at(-1) : undefined;
    const first = prompt[0];
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
        first?.role === "system" && first.content === (await this.context.freezeSystemPrompt()),
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
