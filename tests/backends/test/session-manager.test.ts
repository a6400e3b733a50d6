import { contextTools, sessionSearchTool } from "@contextblocks/ai";
import {
  type SessionBackend,
  SessionBuilder,
  SessionManager,
  type SessionMessage,
} from "@contextblocks/sessions";
import { continuationPreamble } from "@contextblocks/sessions/store-kit";
import { answer, callTool, scriptedModel, toolResult } from "@contextblocks/test-kit/model";
import { generateText, stepCountIs } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends, type OpenBackend } from "../src/backends.js";

/* `SessionManager` over each backend: the registry, what a deletion leaves, forks, splits and search. */

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

describe.each(backends)("SessionManager on $name", (underTest) => {
  let opened: OpenBackend;
  let backend: SessionBackend;
  beforeEach(async () => {
    opened = await underTest.open();
    backend = opened.backend;
  });
  afterEach(() => opened.close());

  it("creates, lists by update, renames and deletes sessions", async () => {
    const manager = new SessionManager(backend);
    const first = await manager.create("First", { model: "m-1", source: "web" });
    const second = await manager.create("Second", { parentSessionId: first.id });
    expect(first).toMatchObject({
      name: "First",
      model: "m-1",
      source: "web",
      input_tokens: 0,
      end_reason: null,
    });
    expect(second.parent_session_id).toBe(first.id);
    await manager.getSession(first.id).appendMessage(message("f1", "hello from first"));
    expect((await manager.list()).map((info) => info.name)).toEqual(["First", "Second"]);
    await manager.rename(second.id, "Renamed");
    expect((await manager.list()).map((info) => info.name)).toEqual(["Renamed", "First"]);
    await expect(manager.rename("nope", "x")).rejects.toThrow(/no session "nope"/);
    await manager.delete(first.id);
    expect(await manager.get(first.id)).toBeNull();
    expect(await manager.search("hello")).toEqual([]);
    expect(await manager.getSession(first.id).getHistory()).toEqual([]);
    const restarted = new SessionManager(await opened.restart());
    expect((await restarted.list()).map((info) => info.name)).toEqual(["Renamed"]);
  });

  it("delete removes everything the session owned, in every table, and nothing of another session", async () => {
    const manager = new SessionManager(
      new SessionBuilder(backend).withContext("memory", { maxTokens: 100 }).withCachedPrompt(),
    );
    const doomed = await manager.create("Doomed");
    const kept = await manager.create("Kept");
    for (const info of [doomed, kept]) {
      const session = manager.getSession(info.id);
      await session.appendMessage(message(`${info.name}-1`, `SECRET-${info.name} said hello`));
      await session.addCompaction(`SECRET-${info.name} summary`, `${info.name}-1`, `${info.name}-1`);
      await session.context.setBlock("memory", `SECRET-${info.name} memory`);
      await session.context.freezeSystemPrompt();
      await backend.runState.save(info.id, { counter: { note: `SECRET-${info.name} state` } });
    }
    await manager.delete(doomed.id);
    const rows = (await opened.everyRow()).join("\n");
    expect(rows).not.toContain("SECRET-Doomed");
    expect(rows).not.toContain(doomed.id);
    expect(rows).toContain("SECRET-Kept memory");
    expect(await backend.runState.load(doomed.id)).toBeNull();
    expect(await backend.runState.load(kept.id)).toEqual({ counter: { note: "SECRET-Kept state" } });
    expect((await manager.search("hello")).map((hit) => hit.sessionId)).toEqual([kept.id]);
    const keptSession = manager.getSession(kept.id);
    expect(await keptSession.store.getPathLength()).toBe(1);
    expect((await keptSession.getCompactions()).map((overlay) => overlay.summary)).toEqual([
      "SECRET-Kept summary",
    ]);
  });

  it("a session of the manager appends, upserts, reads branches and path lengths, and clears", async () => {
    const manager = new SessionManager(backend);
    const { id } = await manager.create("Chat");
    await manager.getSession(id).appendMessages([message("a", "1"), message("b", "2"), message("c", "3")]);
    expect((await manager.getSession(id).store.getLatestLeaf())?.id).toBe("c");
    await manager.getSession(id).upsertMessage(message("b", "2, edited"));
    await manager.getSession(id).upsertMessage(message("b2", "another answer"), { parentId: "a" });
    expect((await manager.getSession(id).getHistory("c"))[1]?.parts[0]?.text).toBe("2, edited");
    expect(ids(await manager.getSession(id).store.getBranches("a"))).toEqual(["b", "b2"]);
    expect(await manager.getSession(id).store.getPathLength()).toBe(2);
    expect(await manager.getSession(id).store.getPathLength("c")).toBe(3);
    await manager.getSession(id).deleteMessages(["b2"]);
    expect(ids(await manager.getSession(id).getHistory())).toEqual(["a", "b", "c"]);
    await manager.getSession(id).clearMessages();
    expect(await manager.getSession(id).getHistory()).toEqual([]);
  });

  it("forks at a message, splits after a compaction, adds usage", async () => {
    const manager = new SessionManager(backend);
    const { id } = await manager.create("Chat", { model: "m-1" });
    await manager
      .getSession(id)
      .appendMessages([message("a", "one"), message("b", "two"), message("c", "three")]);
    const forked = await manager.fork(id, "b", "Forked");
    expect(forked.parent_session_id).toBe(id);
    const copied = await manager.getSession(forked.id).getHistory();
    expect(copied.map((entry) => entry.parts[0]?.text)).toEqual(["one", "two"]);
    expect(ids(copied)).not.toContain("a");
    const overlay = await manager.getSession(id).addCompaction("one and two", "a", "b");
    expect((await manager.getSession(id).getCompactions()).map((entry) => entry.id)).toEqual([overlay.id]);
    const next = await manager.compactAndSplit(id, "the summary", "Continued");
    expect((await manager.get(id))?.end_reason).toBe("compaction");
    expect(next).toMatchObject({ name: "Continued", parent_session_id: id, model: "m-1" });
    expect((await manager.getSession(next.id).getHistory())[0]?.parts[0]?.text).toBe(
      `${continuationPreamble}\n\nthe summary`,
    );
    await manager.addUsage(id, 100, 20, 0.5);
    await manager.addUsage(id, 1, 2, 0.25);
    expect(await manager.get(id)).toMatchObject({
      input_tokens: 101,
      output_tokens: 22,
      estimated_cost: 0.75,
    });
    await expect(manager.addUsage(id, Number.NaN, 0, 0)).rejects.toThrow(/inputTokens/);
  });

  it("searches across sessions, through session_search and the searchable history block; blocks are per session", async () => {
    const manager = new SessionManager(
      new SessionBuilder(backend).withContext("memory", { maxTokens: 100 }),
    ).withSearchableHistory("history");
    const one = await manager.create("One");
    const two = await manager.create("Two");
    await manager.getSession(one.id).appendMessage(message("o1", "the deployment is on Friday"));
    await manager.getSession(two.id).appendMessage(message("t1", "deployment moved to Monday", "assistant"));
    const hits = await manager.search("deployment", { limit: 10 });
    expect(hits.map((hit) => hit.sessionId).sort()).toEqual([one.id, two.id].sort());

    const model = scriptedModel([
      callTool("s1", "session_search", { query: "Friday deployment" }),
      answer("ok"),
    ]);
    await generateText({
      model,
      prompt: "when?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(3),
    });
    expect(String(toolResult(model.doGenerateCalls[1], "s1"))).toMatch(
      /^--- .*\n> user: the deployment is on Friday/,
    );

    const session = manager.getSession(one.id);
    expect(manager.getSession(one.id)).toBe(session);
    await session.context.load();
    const tools = contextTools(session.context);
    expect(Object.keys(tools).sort()).toEqual(["edit_context", "search_context", "set_context"]);
    const blockModel = scriptedModel([
      callTool("h1", "search_context", { label: "history", query: "Monday" }),
      answer("ok"),
    ]);
    await generateText({ model: blockModel, prompt: "when?", tools, stopWhen: stepCountIs(3) });
    expect(String(toolResult(blockModel.doGenerateCalls[1], "h1"))).toContain("deployment moved to Monday");
    // Blocks are per session: the manager's memory template is namespaced by session id.
    await session.context.setBlock("memory", "one's memory");
    await manager.getSession(two.id).context.freezeSystemPrompt();
    expect(manager.getSession(two.id).context.getBlock("memory")?.content).toBe("");
  });
});
