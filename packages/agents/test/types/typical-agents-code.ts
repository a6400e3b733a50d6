// Typical code written against Cloudflare agents' Sessions API (agents@0.22.0), with only the import
// changed from "agents/experimental/memory/session". `pnpm --filter @contextblocks/agents typecheck`
// compiles it.

import {
  AgentContextProvider,
  AgentSearchProvider,
  type ContextProvider,
  isWritableProvider,
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  R2SkillProvider,
  Session,
  SessionManager,
  type SessionMessage,
  type WritableContextProvider,
} from "@contextblocks/agents/experimental/memory/session";
import {
  alignBoundaryBackward,
  alignBoundaryForward,
  COMPACTION_PREFIX,
  type CompactOptions,
  type CompactResult,
  createCompactFunction,
  estimateMessageTokens,
  estimateStringTokens,
  isCompactionMessage,
  sanitizeToolPairs,
  truncateOlderMessages,
} from "@contextblocks/agents/experimental/memory/utils";
import { generateText, type LanguageModel } from "ai";

declare const agent: {
  sql: <T>(strings: TemplateStringsArray, ...values: (string | number | boolean | null)[]) => T[];
};
declare const bucket: R2Bucket;
declare const model: LanguageModel;

class Soul implements ContextProvider {
  async get() {
    return "You are a helpful assistant.";
  }
}

export async function typicalTurn(userText: string): Promise<string> {
  const session = Session.create(agent)
    .forSession("chat-1")
    .withContext("soul", { provider: new Soul() })
    .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
    .withContext("skills", { provider: new R2SkillProvider(bucket, { prefix: "skills/" }) })
    .withContext("notes", { provider: new AgentSearchProvider(agent) })
    .withCachedPrompt()
    .onCompaction(async () => null)
    .compactAfter(100_000);

  const message: SessionMessage = {
    id: crypto.randomUUID(),
    role: "user",
    parts: [{ type: "text", text: userText }],
  };
  await session.appendMessage(message);
  const system = await session.freezeSystemPrompt();
  const history = await session.getHistory();
  const result = await generateText({
    model,
    system,
    prompt: history.map((m) => m.parts.map((p) => ("text" in p ? p.text : "")).join("")).join("\n"),
    tools: await session.tools(),
  });
  await session.replaceContextBlock("memory", "likes TypeScript");
  await session.appendContextBlock("memory", "\nprefers short answers");
  const block = session.getContextBlock("memory");
  const hits = await session.search("TypeScript", { limit: 5 });
  await session.compact().catch(() => null);
  await session.refreshSystemPrompt();
  const loaded = await session.getLoadedSkillKeys();
  await session.unloadSkill("skills", "pdf");
  return `${result.text}${block?.content ?? ""}${hits.length}${loaded.size}`;
}

export async function typicalManager(): Promise<number> {
  const manager = new SessionManager(agent).withContext("memory", { maxTokens: 1100 }).withCachedPrompt();
  // As agents' manager: the registry and search answer at once.
  const info = manager.create("Support chat");
  await manager.append(info.id, { id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
  const history = await manager.getHistory(info.id);
  const list = manager.list();
  const found = manager.search("hello", { limit: 10 }).filter((hit) => hit.content.includes("hello"));
  await manager.delete(info.id);
  const store: WritableContextProvider = new AgentContextProvider(agent, "notes");
  return history.length + list.length + found.length + (isWritableProvider(store) ? 1 : 0);
}

// Compaction helpers from "agents/experimental/memory/utils", Postgres providers, and the manager's other
// agents methods, with only the import changed.
declare const pgClient: {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
};

export async function typicalHelpers(messages: SessionMessage[]): Promise<number> {
  const options: CompactOptions = {
    summarize: async (prompt) => prompt.slice(0, 100),
    protectHead: 3,
    tailTokenBudget: 20_000,
    minTailMessages: 2,
  };
  const compact = createCompactFunction(options);
  const result: CompactResult | null = await compact(messages);
  const head = alignBoundaryForward(messages, 3);
  const tail = alignBoundaryBackward(messages, messages.length - 2);
  const safe = sanitizeToolPairs(truncateOlderMessages(messages, { keepRecent: 4 }));
  const summaries = messages.filter((m) => m.id.startsWith(COMPACTION_PREFIX) || isCompactionMessage(m));
  return (
    head +
    tail +
    safe.length +
    summaries.length +
    estimateStringTokens("hello") +
    estimateMessageTokens(messages) +
    (result === null ? 0 : 1)
  );
}

export async function typicalPostgres(): Promise<string> {
  const session = new Session(new PostgresSessionProvider(pgClient, "chat-1"), {
    context: [
      {
        label: "memory",
        description: "Learned facts",
        maxTokens: 1100,
        provider: new PostgresContextProvider(pgClient, "memory"),
      },
      { label: "notes", provider: new PostgresSearchProvider(pgClient) },
    ],
  });
  return session.freezeSystemPrompt();
}

export async function typicalManagerMethods(): Promise<number> {
  const manager = new SessionManager(agent);
  const info = manager.create("Chat");
  manager.rename(info.id, "Renamed chat");
  manager.addUsage(info.id, 100, 20, 0.001);
  const renamed: string | undefined = manager.get(info.id)?.name;
  const tools = manager.tools();
  const count = await manager.getMessageCount(info.id);
  const session = manager.getSession(info.id);
  const sessionTools = await session.tools();
  return count + Object.keys(tools).length + Object.keys(sessionTools).length + (renamed?.length ?? 0);
}
