import { DurableObject } from "cloudflare:workers";
import { isReminderPart, loadedEntriesFromMessages, type RunMessage, toolOutcomeOf } from "@contextblocks/ai";
import {
  type BlockVersion,
  type ContextBlocks,
  isContextError,
  parseSections,
  renderSection,
  usagePercent,
} from "@contextblocks/core";
import { createInspector, readTree } from "@contextblocks/inspector";
import { createTables } from "@contextblocks/postgres";
import {
  estimateMessageTokens,
  isCompactionMessage,
  isSessionMessageEvent,
  type Session,
  type SessionEvent,
  type SessionInfo,
  type SessionMessage,
} from "@contextblocks/sessions";
import type { PgPoolLike } from "@contextblocks/sql";
import {
  generateText,
  type LanguageModelMiddleware,
  stepCountIs,
  type UIMessage,
  wrapLanguageModel,
} from "ai";
import {
  agentDate,
  createAgentContext,
  DATE_OVERRIDE_KEY,
  fixedDateFrom,
  type PostgresStore,
  PROFILE_OBJECT,
  seedKnowledge,
} from "./agent-context.js";
import { Conversations, compactAfterFrom, PROTECT_HEAD, TAIL_TOKEN_BUDGET } from "./conversations.js";
import { sha256Hex } from "./hash.js";
import { authorizeInspector, inspectorLogin } from "./inspector-login.js";
import { type ChosenModel, chooseModel, OFFLINE_NOTE } from "./model.js";
import { AgentSettings } from "./settings.js";
import { SharedBlockProvider } from "./shared-block.js";
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
import { messageText } from "./turn-message.js";

/** Tool steps a turn may take before the model must answer. */
const MAX_STEPS = 5;
/** Messages of one session `GET /agents/:id/blocks` shows; a longer conversation shows its first ones. */
const MAX_TREE_MESSAGES = 400;
/** Transcript messages `GET /agents/:id/blocks` shows. */
const RECENT_MESSAGES = 12;
/** Conversations `GET /agents/:id/blocks` shows, most recently written first. */
const MAX_SESSIONS_SHOWN = 20;

/** Where a turn goes: a conversation (default: the current one) and, for an edit, the message it replaces. */
export interface TurnTarget {
  sessionId?: string;
  /** Edit: the user message whose new text becomes its sibling, a new branch of the tree. */
  editOf?: string;
}

/** What the model received in one call of a turn: the pipeline's output (a step of the tool loop each). */
type SentCall = { prompt: RunMessage[] };

/**
 * One agent: a Durable Object with SQLite storage holding its blocks, its frozen prompt, its knowledge index
 * and its conversations (sessions on `sqliteBackend(ctx.storage)`: message trees with compaction). Every
 * turn goes through `contextPipeline({ model, session })`: the session supplies the frozen prompt, the
 * history, the storing of the turn and the compaction. The Worker validates requests and calls these
 * methods over RPC.
 */
export class AgentObject extends DurableObject<Env> {
  private readonly settings: AgentSettings;
  private readonly context: ContextBlocks;
  private readonly conversations: Conversations;
  private readonly compactAfter: number;
  private readonly chosen: ChosenModel;
  /** Lifecycle events of the agent (its blocks, its conversations), broadcast to open inspector pages. */
  private readonly live = new Set<(event: object) => void>();
  /** `@contextblocks/inspector`'s handler, per path it is mounted under (`/agents/<id>/inspector`). */
  private readonly inspectors = new Map<string, (request: Request) => Promise<Response>>();
  /** The model calls of the running turn, as the pipeline sent them (recorded by an inner middleware). */
  private sent: SentCall[] = [];
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
      env.SHARED_BLOCK === undefined
        ? undefined
        : new SharedBlockProvider(env.SHARED_BLOCK.getByName(PROFILE_OBJECT)),
    );
    this.context = context;
    this.chosen = chooseModel(env);
    const model = this.chosen.model;
    // The inner middleware: it sees each call as the pipeline (the outer one) sends it to the model.
    const record: LanguageModelMiddleware = {
      specificationVersion: "v3",
      transformParams: async ({ params }) => {
        this.sent.push({ prompt: params.prompt });
        return params;
      },
    };
    this.conversations = new Conversations(ctx.storage, {
      context,
      model: wrapLanguageModel({ model, middleware: record }),
      // The summary is written by the agent's own model (offline: the scripted model's summary).
      summarize: async (prompt) => (await generateText({ model, prompt })).text,
      compactAfter: this.compactAfter,
      onCompacted: (event) => this.broadcast(event),
    });
    // Everything the inspector page streams live: block writes, prompt freezes and refreshes, reminders
    // sent (the shared context), compactions (each conversation), conversations created and deleted.
    context.subscribe((event) => this.broadcast(event));
    // Not the message change feed: a message (a 3 MB tool output) is not sent to every page on each append.
    this.conversations.manager.subscribe((event) => {
      if (!isSessionMessageEvent(event)) this.broadcast(event);
    });
    // First start: index the seed entries, then freeze. Cold start: the stored prompt, as it was.
    void ctx.blockConcurrencyWhile(async () => {
      await seedKnowledge(this.context, this.settings);
      await this.context.freezeSystemPrompt();
    });
  }

  /** A block's kept versions, newest first (`GET /agents/:id/history?label=…&limit=…`). */
  async blockVersions(label: string, limit: number): Promise<BlockVersion[] | Refusal> {
    try {
      return await this.context.blockVersions(label, { limit });
    } catch (error) {
      return refusal(error);
    }
  }

  /** Writes an earlier version again, as a new version (`POST /agents/:id/restore`). */
  async restoreBlock(label: string, version: number): Promise<RestoredBlock | Refusal> {
    try {
      const block = await this.context.restoreBlock(label, version);
      return { label, version, content: block.content, tokens: block.tokens };
    } catch (error) {
      return refusal(error);
    }
  }

  /**
   * `/agents/:id/inspector/…`: `@contextblocks/inspector` over the agent's blocks and conversations, with
   * their lifecycle events live. Only with the `INSPECTOR_TOKEN`: a bearer header, or the cookie the login
   * at `/agents/:id/inspector/login` sets (what a browser uses); read-only.
   */
  override async fetch(request: Request): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    const base = /^\/agents\/[^/]+\/inspector/.exec(pathname)?.[0];
    if (base === undefined) return new Response("Not found", { status: 404 });
    const token = this.env.INSPECTOR_TOKEN ?? "";
    if (pathname === `${base}/login`) return inspectorLogin(request, token, base);
    let inspector = this.inspectors.get(base);
    if (inspector === undefined) {
      inspector = createInspector({
        context: this.context,
        sessions: this.conversations.manager,
        events: (listener) => {
          this.live.add(listener);
          return () => this.live.delete(listener);
        },
        title: `Agent ${decodeURIComponent(base.split("/")[2] ?? "")}`,
        basePath: base,
        authorize: (incoming) => authorizeInspector(incoming, token, base),
      });
      this.inspectors.set(base, inspector);
    }
    return inspector(request);
  }

  private broadcast(event: object): void {
    for (const listener of [...this.live]) listener(event);
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
    const chosen = this.chosen;
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
        count: current === null ? 0 : await this.session(current.id).store.getPathLength(),
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

  private session(sessionId: string): Session {
    return this.conversations.open(sessionId).session;
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
    const conversation = this.conversations.open(info.id);
    const { session, pipeline } = conversation;
    // Where the user's message goes: under the latest leaf, or, for an edit, beside the edited message.
    let parentId: string | null;
    if (target.editOf === undefined) parentId = (await session.store.getLatestLeaf())?.id ?? null;
    else {
      const place = await session.store.getNode(target.editOf);
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
    // What the pipeline loads before the new message (for the report: the ids of what the model got).
    const sentHistory = parentId === null ? [] : await session.getHistory(parentId);
    const frozen = await this.context.freezeSystemPrompt();

    // Only the new message: the session supplies the prompt, the history, the tools; it stores the turn
    // (the user's words, never the reminder) once the model answered, then compacts past the threshold.
    const events: SessionEvent[] = [];
    const unsubscribe = session.subscribe((event) => events.push(event));
    this.sent = [];
    let result: Awaited<ReturnType<typeof generateText<typeof pipeline.tools>>>;
    try {
      result = await generateText({
        model: pipeline.model,
        tools: pipeline.tools,
        prompt: text,
        stopWhen: stepCountIs(MAX_STEPS),
        // An edit continues the edited message's parent: a new branch beside the old one.
        ...(target.editOf === undefined ? {} : { providerOptions: { contextblocks: { parentId } } }),
      });
    } finally {
      unsubscribe();
    }
    const sent = this.sent;
    const storedIds = await turnMessageIds(session, parentId);
    const userMessageId = storedIds[0] ?? "";
    await manager.addUsage(
      info.id,
      result.totalUsage.inputTokens ?? 0,
      result.totalUsage.outputTokens ?? 0,
      0,
    );

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
    const systemSent = systemOf(sent[0]);
    const now = await this.context.freezeSystemPrompt();
    const chosen = this.chosen;
    return {
      agent,
      reminder: sentReminder(sent[0]),
      model: chosen.name,
      offline: chosen.offline,
      ...(chosen.offline ? { note: OFFLINE_NOTE } : {}),
      reply: result.text,
      toolCalls,
      systemIsFrozenPrompt: sent.length > 0 && sent.every((call) => systemOf(call) === frozen),
      promptSha256: await sha256Hex(systemSent),
      transcriptLength: await session.store.getPathLength(),
      session: { id: info.id, name: info.name },
      userMessageId,
      assistantMessageId: storedIds.at(-1) ?? "",
      storedMessageIds: storedIds,
      parentId,
      sentMessageIds: [...sentHistory.map((message) => message.id), userMessageId],
      historyTokens: this.context.estimateTokens(now) + estimateMessageTokens(await session.getHistory()),
      compactAfterTokens: this.compactAfter,
      compaction: await compactionOf(events),
      compactionError: conversation.takeCompactionError(),
    };
  }

  private async sessionView(info: SessionInfo, current: boolean): Promise<SessionView> {
    const session = this.session(info.id);
    const compactions = await session.getCompactions();
    const leaf = await session.store.getLatestLeaf();
    const tree = await readTree(session.store, leaf?.id ?? null, compactions, MAX_TREE_MESSAGES);
    return {
      id: info.id,
      name: info.name,
      current,
      createdAt: info.created_at,
      updatedAt: info.updated_at,
      pathLength: await session.store.getPathLength(),
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

/** The system prompt a model call carried first. */
function systemOf(call: SentCall | undefined): string {
  const first = call?.prompt[0];
  return first?.role === "system" ? first.content : "";
}

/** The reminder the pipeline attached to the newest user message of a call, or `null`. */
function sentReminder(call: SentCall | undefined): string | null {
  const user = call?.prompt.filter((message) => message.role === "user").at(-1);
  const last = user?.role === "user" ? user.content.at(-1) : undefined;
  return last?.type === "text" && isReminderPart(last) ? last.text : null;
}

/**
 * The messages the turn stored, oldest first: from the latest leaf up the parents to where the turn
 * began (the pipeline stores each model call's messages; a turn with a tool call is the user's message,
 * the call's step and the answer).
 */
async function turnMessageIds(session: Session, parentId: string | null): Promise<string[]> {
  const ids: string[] = [];
  let id = (await session.store.getLatestLeaf())?.id ?? null;
  while (id !== null && id !== parentId && ids.length <= 2 * MAX_STEPS + 1) {
    ids.push(id);
    id = (await session.store.getNode(id))?.parentId ?? null;
  }
  return ids.reverse();
}

/** The compaction the session ran after the turn (its `compacted` event), and the prompt it refreshed. */
async function compactionOf(events: readonly SessionEvent[]): Promise<ChatResult["compaction"]> {
  const compacted = events.find((event) => event.type === "compacted");
  if (compacted?.type !== "compacted") return null;
  const refreshed = [...events].reverse().find((event) => event.type === "prompt-refreshed");
  return {
    fromMessageId: compacted.fromMessageId,
    toMessageId: compacted.toMessageId,
    summary: compacted.summary,
    promptSha256: await sha256Hex(refreshed?.type === "prompt-refreshed" ? refreshed.prompt : ""),
  };
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
 * this object's namespace (its id), apart from every other agent's rows. Each statement (each transaction for
 * a batch) runs on a `pg.Client` opened for it and closed after, as Cloudflare advises for Hyperdrive, which
 * keeps the real connections pooled: no socket is kept open in the object between requests. `pg` is loaded
 * on first use only, so the SQLite configuration never loads it.
 *
 * The tables are created once per object, before its first statement (`createTables`, idempotent), rather
 * than by each store on its first "relation does not exist" error: a statement that fails and a connection
 * closed right after it can leave the server's last reply unread, and `wrangler dev`'s local Hyperdrive
 * proxy ends the whole dev server on the reset that follows.
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
  const perUse: PgPoolLike = {
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
  let schema: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    schema ??= createTables(perUse).catch((error: unknown) => {
      schema = undefined; // tried again by the next statement
      throw error;
    });
    return schema;
  };
  const client: PgPoolLike = {
    async query(text, values) {
      await ready();
      return perUse.query(text, values);
    },
    async connect() {
      await ready();
      return perUse.connect();
    },
    idleCount: 0,
  };
  return { client, namespace: ctx.id.toString() };
}

/** What `POST /agents/:id/restore` answers. */
export interface RestoredBlock {
  label: string;
  /** The version whose content was written again (as a new version). */
  version: number;
  content: string;
  tokens: number;
}

/** A block operation's ContextError as a refusal the Worker turns into an HTTP error. */
function refusal(error: unknown): Refusal {
  if (!isContextError(error)) throw error;
  const status = error.code === "NOT_FOUND" ? 404 : 400;
  return { refused: { status, error: `${error.code}: ${error.message}` } };
}
