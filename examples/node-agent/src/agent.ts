import { isReminderPart, prepareContextTurn, toolOutcomeOf } from "@contextblocks/ai";
import { type ContextBlock, ContextBlocks, entryKey, SYSTEM_PROMPT_LABEL } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from "ai";
import Database from "better-sqlite3";
import { SCRIPTED_MODEL_ID, ScriptedModel } from "scripted-model";
import { agentBlocks, KNOWLEDGE_SEED, LABELS } from "./blocks.js";

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
  model?: LanguageModel;
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
  private readonly model: LanguageModel;
  private turns: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly database: Database.Database,
    options: NodeAgentOptions,
  ) {
    database.exec(`CREATE TABLE IF NOT EXISTS ${SETTINGS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    database.exec(
      `CREATE TABLE IF NOT EXISTS ${TRANSCRIPT_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, message TEXT NOT NULL)`,
    );
    this.context = new ContextBlocks(
      agentBlocks(new Fts5SearchProvider(database, { label: LABELS.knowledge }), () => this.today()),
      new SqliteContextProvider(database, SYSTEM_PROMPT_LABEL),
      (label) => new SqliteContextProvider(database, label),
    );
    this.model =
      options.model ??
      new ScriptedModel({
        memoryLabel: LABELS.memory,
        knowledgeLabel: LABELS.knowledge,
        environmentLabel: LABELS.environment,
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
  transcript(): ModelMessage[] {
    return this.database
      .prepare<[], { message: string }>(`SELECT message FROM ${TRANSCRIPT_TABLE} ORDER BY id`)
      .all()
      .map((row) => JSON.parse(row.message) as ModelMessage);
  }

  /** One turn: the frozen prompt, the transcript plus this message (and any reminder), the tools. */
  chat(message: string): Promise<TurnResult> {
    const turn = this.turns.then(() => this.runTurn(message));
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  close(): void {
    this.database.close();
  }

  private async runTurn(message: string): Promise<TurnResult> {
    const userMessage: ModelMessage = { role: "user", content: message };
    const turn = await prepareContextTurn(this.context, [...this.transcript(), userMessage]);
    const result = await generateText({
      model: this.model,
      system: turn.system,
      messages: turn.messages,
      tools: turn.tools,
      stopWhen: stepCountIs(MAX_STEPS),
    });
    // The reminder went with this request only; the transcript keeps the user's own words.
    const insert = this.database.prepare(`INSERT INTO ${TRANSCRIPT_TABLE} (message) VALUES (?)`);
    this.database.transaction((messages: ModelMessage[]) => {
      for (const stored of messages) insert.run(JSON.stringify(stored));
    })([userMessage, ...result.response.messages]);
    const last = turn.messages.at(-1);
    const lastPart =
      last?.role === "user" && typeof last.content !== "string" ? last.content.at(-1) : undefined;
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
      systemIsFrozenPrompt: turn.system === (await this.context.freezeSystemPrompt()),
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

function modelName(model: LanguageModel | undefined): string {
  if (model === undefined) return SCRIPTED_MODEL_ID;
  return typeof model === "string" ? model : `${model.provider}:${model.modelId}`;
}
