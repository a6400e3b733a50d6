import { DurableObject } from "cloudflare:workers";
import {
  isReminderPart,
  loadedEntriesFromMessages,
  prepareContextTurn,
  toolOutcomeOf,
} from "@contextblocks/ai";
import { type ContextBlocks, parseSections, renderSection, usagePercent } from "@contextblocks/core";
import { isCompactionMessage, type SessionInfo, type SessionMessage } from "@contextblocks/sessions";
import { estimateMessageTokens } from "@contextblocks/sessions/compaction";
import type { PgPoolLike } from "@contextblocks/sql";
import { convertToModelMessages, generateText, stepCountIs, type UIMessage } from "ai";
import {
  agentDate,
  createAgentContext,
  DATE_OVERRIDE_KEY,
  fixedDateFrom,
  type PostgresStore,
  seedKnowledge,
} from "./agent-context.js";
import { Conversations, compactAfterFrom, PROTECT_HEAD, TAIL_TOKEN_BUDGET } from "./conversations.js";
import { sha256Hex } from "./hash.js";
import { placeOf, readTree } from "./message-tree.js";
import { chooseModel, OFFLINE_NOTE } from "./model.js";
import { AgentSettings } from "./settings.js";
import type {
  AgentSnapshot,
  BlockView,
  ChatResult,
  CreatedSession,
  RefreshResult,
  Refusal,
  SessionView,
  ToolCallView,
  TranscriptLine,
} from "./snapshot.js";
import { assistantMessage, messageText, userMessage } from "./turn-message.js";

/** Tool steps a turn may take before the model must answer. */
const MAX_STEPS = 5;
/** Transcript messages the inspector shows. */
const RECENT_MESSAGES = 12;
/** Conversations the inspector shows, most recently written first. */
const MAX_SESSIONS_SHOWN = 20;

/** Where a turn goes: a conversation (default: the current one) and, for an edit, the message it replaces. */
export interface TurnTarget {
  sessionId?: string;
  /** Edit: the user message whose new text becomes its sibling, a new branch of the tree. */
  editOf?: string;
}

/**
 * One agent: a Durable Object with SQLite storage holding its blocks, its frozen prompt, its knowledge index
 * and its conversations (sessions of a `SessionManager`: message trees with compaction). The Worker
 * validates requests and calls these methods over RPC.
 */
export class AgentObject extends DurableObject<Env> {
  private readonly settings: AgentSettings;
  private readonly context: ContextBlocks;
  private readonly conversations: Conversations;
  private readonly compactAfter: number;
  /** `AGENT_DATE`, when configured: a fixed "today" (the screenshot test uses it). */
  private readonly fixedDate: string | undefined;
  /** Turns run one at a time: each reads a conversation and appends to it. */
  private turns: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.settings = new AgentSettings(ctx.storage);
    this.fixedDate = fixedDateFrom(env.AGENT_DATE);
    this.compactAfter = compactAfterFrom(env.COMPACT_AFTER_TOKENS);
    const context = createAgentContext(
      ctx.storage,
      env.SKILLS_BUCKET,
      this.settings,
      this.fixedDate,
      postgresStore(ctx, env),
    );
    this.context = context;
    this.conversations = new Conversations(ctx.storage, {
      // The summary is written by the agent's own model (offline: the scripted model's summary).
      summarize: async (prompt) => (await generateText({ model: chooseModel(env).model, prompt })).text,
      promptTokens: async () => context.estimateTokens(await context.freezeSystemPrompt()),
      compactAfter: this.compactAfter,
    });
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
    const current = await this.conversations.current();
    const history = current === null ? [] : await this.session(current.id).getHistory();
    const loaded = loadedEntriesFromMessages(history as unknown as UIMessage[]);
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
    const promptTokens = this.context.estimateTokens(prompt);
    const sessions = await this.conversations.manager.list();
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
      promptTokens,
      reminder,
      blocks,
      tools: this.context.toolSpecs().map(({ name, description, inputSchema }) => ({
        name,
        description,
        inputSchema,
      })),
      transcript: {
        session: current?.id ?? null,
        count: current === null ? 0 : await this.session(current.id).getPathLength(),
        recent: recentLines(history),
      },
      compaction: {
        afterTokens: this.compactAfter,
        protectHead: PROTECT_HEAD,
        tailTokenBudget: TAIL_TOKEN_BUDGET,
        historyTokens: promptTokens + estimateMessageTokens(history),
      },
      sessions: await Promise.all(
        sessions.slice(0, MAX_SESSIONS_SHOWN).map((info) => this.sessionView(info, info.id === current?.id)),
      ),
    };
  }

  /** Runs one turn: the frozen prompt, the conversation plus this message (and any reminder), the tools. */
  chat(agent: string, message: string, target: TurnTarget = {}): Promise<ChatResult | Refusal> {
    const turn = this.turns.then(() => this.runTurn(agent, message, target));
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  /** Starts a new conversation; turns go to it from now on (it is the most recently written). */
  async createSession(agent: string, name: string | undefined): Promise<CreatedSession> {
    const count = (await this.conversations.manager.list()).length;
    const info = await this.conversations.manager.create(name ?? `Conversation ${count + 1}`, {
      source: "worker-agent",
    });
    return { agent, session: { id: info.id, name: info.name } };
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

  private session(sessionId: string) {
    return this.conversations.manager.getSession(sessionId);
  }

  private async runTurn(agent: string, text: string, target: TurnTarget): Promise<ChatResult | Refusal> {
    const manager = this.conversations.manager;
    let info: SessionInfo;
    if (target.sessionId === undefined) info = await this.conversations.currentOrFirst();
    else {
      const found = await manager.get(target.sessionId);
      if (found === null) return refuse(404, `No conversation "${target.sessionId}" in agent ${agent}`);
      info = found;
    }
    const session = this.session(info.id);
    // Where the user's message goes: under the latest leaf, or, for an edit, beside the edited message.
    let parentId: string | null;
    if (target.editOf === undefined) parentId = (await session.getLatestLeaf())?.id ?? null;
    else {
      const place = placeOf(this.ctx.storage, info.id, target.editOf);
      if (place === null) {
        return refuse(404, `No message "${target.editOf}" in conversation "${info.id}" of agent ${agent}`);
      }
      if (place.role !== "user") {
        return refuse(
          400,
          `Message "${target.editOf}" is a ${place.role} message; only a user message can be edited`,
        );
      }
      parentId = place.parentId;
    }
    const history = parentId === null ? [] : await session.getHistory(parentId);

    const chosen = chooseModel(this.env);
    const user = userMessage(text);
    const turn = await prepareContextTurn(this.context, [...history, user] as unknown as UIMessage[]);
    const result = await generateText({
      model: chosen.model,
      system: turn.system,
      messages: await convertToModelMessages(turn.messages, { tools: turn.tools }),
      tools: turn.tools,
      stopWhen: stepCountIs(MAX_STEPS),
    });
    const prompt = await this.context.freezeSystemPrompt();
    // Stored only once the model answered: a failed turn adds nothing. The reminder travelled with this
    // request only; the conversation keeps the user's own words.
    const answer = assistantMessage(result.steps);
    await manager.append(info.id, user, parentId);
    await manager.append(info.id, answer, user.id);
    await manager.addUsage(
      info.id,
      result.totalUsage.inputTokens ?? 0,
      result.totalUsage.outputTokens ?? 0,
      0,
    );
    const compaction = await this.afterCompaction();

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
    const now = await this.context.freezeSystemPrompt();
    return {
      agent,
      reminder: sentReminder(turn.messages.at(-1)),
      model: chosen.name,
      offline: chosen.offline,
      ...(chosen.offline ? { note: OFFLINE_NOTE } : {}),
      reply: result.text,
      toolCalls,
      systemIsFrozenPrompt: turn.system === prompt,
      promptSha256: await sha256Hex(turn.system),
      transcriptLength: await session.getPathLength(),
      session: { id: info.id, name: info.name },
      userMessageId: user.id,
      assistantMessageId: answer.id,
      parentId,
      sentMessageIds: turn.messages.map((message) => message.id),
      historyTokens: this.context.estimateTokens(now) + estimateMessageTokens(await session.getHistory()),
      compactAfterTokens: this.compactAfter,
      compaction: compaction.result,
      compactionError: compaction.error,
    };
  }

  /**
   * After a compaction the history's prefix changed anyway, so the frozen prompt is refreshed too (the one
   * deliberate cache bust, as `Session.compact` does for its own blocks): memory written in the turns now
   * summarised reaches the prompt.
   */
  private async afterCompaction(): Promise<{
    result: ChatResult["compaction"];
    error: string | null;
  }> {
    const { result, error } = this.conversations.takeCompaction();
    if (result === null) return { result: null, error };
    const prompt = await this.context.refreshSystemPrompt();
    return {
      result: {
        fromMessageId: result.fromMessageId,
        toMessageId: result.toMessageId,
        summary: result.summary,
        promptSha256: await sha256Hex(prompt),
      },
      error,
    };
  }

  private async sessionView(info: SessionInfo, current: boolean): Promise<SessionView> {
    const session = this.session(info.id);
    const compactions = await session.getCompactions();
    const leaf = await session.getLatestLeaf();
    const tree = readTree(this.ctx.storage, info.id, leaf?.id ?? null, compactions);
    return {
      id: info.id,
      name: info.name,
      current,
      createdAt: info.created_at,
      updatedAt: info.updated_at,
      pathLength: await session.getPathLength(),
      storedMessages: tree.total,
      inputTokens: info.input_tokens,
      outputTokens: info.output_tokens,
      tree: tree.nodes,
      compactions: tree.overlays,
    };
  }
}

function refuse(status: 400 | 404, error: string): Refusal {
  return { refused: { status, error } };
}

/** The reminder `prepareContextTurn` attached to the user's message, or `null`. */
function sentReminder(message: UIMessage | undefined): string | null {
  if (message?.role !== "user") return null;
  const last = message.parts.at(-1);
  return last?.type === "text" && isReminderPart(last) ? last.text : null;
}

function recentLines(messages: readonly SessionMessage[]): TranscriptLine[] {
  return messages.slice(-RECENT_MESSAGES).map((message) => ({
    id: message.id,
    role: message.role,
    text: messageText(message),
    summary: isCompactionMessage(message),
  }));
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
