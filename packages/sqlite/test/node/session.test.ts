import { contextTools, loadedSkillKeys, unloadSkill } from "@contextblocks/ai";
import { ContextBlocks, isContextError } from "@contextblocks/core";
import { InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import { Session, SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import type { SessionStore } from "@contextblocks/sessions/store-kit";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import { answer, callTool, promptText, scriptedModel, toolResult } from "@contextblocks/test-kit/model";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, stepCountIs } from "ai";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

describe("Session.create", () => {
  it("sqliteBackend accepts better-sqlite3, a SqlClient and an agents-style sql host; new Session takes a store", async () => {
    const database = temporary.database;
    const hosts = [database, fromBetterSqlite3(database), agentsHost(database)];
    await new SessionBuilder(sqliteBackend(database))
      .forSession("same")
      .build()
      .appendMessage(message("m1", "hello"));
    for (const host of hosts) {
      const session = new SessionBuilder(sqliteBackend(host)).forSession("same").build();
      expect(ids(await session.getHistory())).toEqual(["m1"]);
    }
    const direct = new Session({ store: sqliteTree(database, "same") });
    expect(ids(await direct.getHistory())).toEqual(["m1"]);
    expect(() => sqliteBackend(42 as never)).toThrow();
  });

  it("builder calls are order-independent; a built session keeps the settings it was built with", async () => {
    const builder = new SessionBuilder(sqliteBackend(temporary.database))
      .withCachedPrompt()
      .withContext("memory", { description: "Facts", maxTokens: 200 })
      .forSession("chat");
    const session = builder.build();
    await session.context.setBlock("memory", "User likes tea.");
    expect(await session.context.freezeSystemPrompt()).toContain("User likes tea.");
    builder.withContext("late");
    expect(session.context.getConfigs().map((config) => config.label)).toEqual(["memory"]);
  });

  it("keeps blocks and frozen prompts of sessions apart, and the prompt survives a restart", async () => {
    const build = (database: Database.Database, id: string) =>
      new SessionBuilder(sqliteBackend(database))
        .forSession(id)
        .withContext("memory", { maxTokens: 200 })
        .withCachedPrompt()
        .build();
    const first = build(temporary.database, "one");
    const second = build(temporary.database, "two");
    await first.context.setBlock("memory", "one's fact");
    await second.context.setBlock("memory", "two's fact");
    const prompt = await first.context.freezeSystemPrompt();
    expect(prompt).toContain("one's fact");
    expect(await second.context.freezeSystemPrompt()).toContain("two's fact");
    await first.context.setBlock("memory", "changed later");
    const restarted = build(temporary.reopen(), "one");
    expect(await restarted.context.freezeSystemPrompt()).toBe(prompt);
    expect(await restarted.context.refreshSystemPrompt()).toContain("changed later");
  });

  it("the direct constructor takes a store and a ContextBlocks", async () => {
    const backend = sqliteBackend(temporary.database);
    const session = new Session({
      store: sqliteTree(temporary.database, "chat"),
      context: new ContextBlocks(
        [{ label: "soul", provider: { get: async () => "You are helpful." } }, { label: "notes" }],
        null,
        (label) => backend.block(label, "chat"),
      ),
    });
    await session.appendMessage(message("a", "hi"));
    expect(await session.context.freezeSystemPrompt()).toContain("You are helpful.");
    expect(session.context.getBlock("notes")?.writable).toBe(true);
  });
});

describe("Session tools through generateText", () => {
  it("set_context writes the session's memory; a bad call reads as Error text, nothing thrown", async () => {
    const session = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat")
      .withContext("memory", { description: "Facts", maxTokens: 50 })
      .build();
    const model = scriptedModel([
      callTool("c1", "set_context", { label: "memory", content: "User likes tea." }),
      callTool("c2", "set_context", { label: "nope", content: "x" }),
      answer("done"),
    ]);
    await session.context.load();
    const result = await generateText({
      model,
      system: await session.context.freezeSystemPrompt(),
      prompt: "remember that I like tea",
      tools: contextTools(session.context),
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe("done");
    expect(session.context.getBlock("memory")?.content).toBe("User likes tea.");
    expect(String(toolResult(model.doGenerateCalls[2], "c2"))).toMatch(/^Error: /);
  });

  it("unloadSkill replaces the stored load_context result with a marker; loaded keys survive a restart", async () => {
    const store = new InMemoryStore();
    const skills = { "pdf-forms": { content: "PDF FORM INSTRUCTIONS", description: "Forms" } };
    const build = (database: Database.Database) =>
      new SessionBuilder(sqliteBackend(database))
        .forSession("chat")
        .withContext("skills", { provider: new InMemorySkillProvider({ store, skills }) })
        .build();
    const session = build(temporary.database);
    const model = scriptedModel([
      callTool("load-1", "load_context", { label: "skills", key: "pdf-forms" }),
      answer("ok"),
    ]);
    await session.context.load();
    const result = await generateText({
      model,
      prompt: "fill the form",
      tools: contextTools(session.context),
      stopWhen: stepCountIs(3),
    });
    expect(toolResult(model.doGenerateCalls[1], "load-1")).toBe("PDF FORM INSTRUCTIONS");
    // Store the turn as a UI message with the tool part, as a chat agent does.
    const call = result.steps[0]?.toolResults[0];
    await session.appendMessage(message("u1", "fill the form"));
    await session.appendMessage({
      id: "a1",
      role: "assistant",
      parts: [
        {
          type: "tool-load_context",
          toolCallId: String(call?.toolCallId),
          state: "output-available",
          input: call?.input,
          output: call?.output,
        },
      ],
    });
    const restarted = build(temporary.reopen());
    expect([...(await loadedSkillKeys(restarted))]).toEqual(["skills:pdf-forms"]);
    expect(await unloadSkill(restarted, "skills", "pdf-forms")).toBe(true);
    const stored = await restarted.store.getMessage("a1");
    expect(stored?.parts[0]?.output).toEqual({ isError: false, text: "[unloaded: pdf-forms from skills]" });
    expect(JSON.stringify(await restarted.getHistory())).not.toContain("PDF FORM INSTRUCTIONS");
    expect(await unloadSkill(restarted, "skills", "pdf-forms")).toBe(false);
    expect([...(await loadedSkillKeys(build(temporary.reopen())))]).toEqual([]);
  });
});

describe("Session search", () => {
  it("finds messages by their words and throws UNSUPPORTED without searchMessages", async () => {
    const session = new SessionBuilder(sqliteBackend(temporary.database)).forSession("chat").build();
    await session.appendMessage(message("a", "We deploy on Friday afternoon"));
    await session.appendMessage(message("b", "Lunch is at noon", "assistant"));
    const hits = await session.search("when do we deploy?", { limit: 5 });
    // "b" follows "a": found through its context (the turn before it), ranked below "a".
    expect(hits.map((hit) => [hit.id, hit.role, hit.content])).toEqual([
      ["a", "user", "We deploy on Friday afternoon"],
      ["b", "assistant", "Lunch is at noon"],
    ]);
    expect(typeof hits[0]?.createdAt).toBe("string");
    const inner = sqliteTree(temporary.database, "chat");
    const withoutSearch: SessionStore = {
      sessionId: "chat",
      getNode: (id) => inner.getNode(id),
      getTree: (options) => inner.getTree(options),
      getMessage: (id) => inner.getMessage(id),
      getHistory: (leaf) => inner.getHistory(leaf),
      getLatestLeaf: () => inner.getLatestLeaf(),
      getBranches: (id) => inner.getBranches(id),
      getPathLength: (leaf) => inner.getPathLength(leaf),
      appendMessage: (entry, parent) => inner.appendMessage(entry, parent),
      updateMessage: (entry) => inner.updateMessage(entry),
      deleteMessages: (entries) => inner.deleteMessages(entries),
      clearMessages: () => inner.clearMessages(),
      addCompaction: (summary, from, to) => inner.addCompaction(summary, from, to),
      getCompactions: () => inner.getCompactions(),
    };
    const error = await new Session({ store: withoutSearch })
      .search("deploy")
      .catch((caught: unknown) => caught);
    expect(isContextError(error) && error.code).toBe("UNSUPPORTED");
  });
});

describe("compaction", () => {
  const turns = (count: number) =>
    Array.from({ length: count }, (_, index) =>
      message(`m${index}`, `turn ${index}: ${"detail ".repeat(40)}`, index % 2 === 0 ? "user" : "assistant"),
    );

  it("summarises the middle through generateText, keeps head and tail, and updates the summary next time", async () => {
    const model = scriptedModel([answer("FIRST SUMMARY"), answer("SECOND SUMMARY")]);
    const summarize = async (prompt: string) => (await generateText({ model, prompt })).text;
    const session = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat")
      .onCompaction(
        createCompactFunction({ summarize, protectHead: 2, tailTokenBudget: 150, minTailMessages: 2 }),
      )
      .build();
    for (const turn of turns(10)) await session.appendMessage(turn);
    const first = await session.compact();
    expect(first).not.toBeNull();
    const history = await session.getHistory();
    expect(ids(history).slice(0, 2)).toEqual(["m0", "m1"]);
    expect(history[2]?.parts[0]?.text).toBe("FIRST SUMMARY");
    expect(ids(history).at(-1)).toBe("m9");
    const firstPrompt = promptText(model.doGenerateCalls[0]);
    for (const section of ["## Topic", "## Key Points", "## Current State", "## Open Items"]) {
      expect(firstPrompt).toContain(section);
    }
    expect(firstPrompt).toContain("turn 2:");
    expect(firstPrompt).not.toContain("turn 0:");
    expect(firstPrompt).not.toContain("turn 9:");

    for (const turn of turns(16).slice(10)) await session.appendMessage(turn);
    await session.compact();
    const secondPrompt = promptText(model.doGenerateCalls[1]);
    expect(secondPrompt).toContain("PREVIOUS SUMMARY:\nFIRST SUMMARY");
    const after = await session.getHistory();
    expect(
      after.filter((entry) => entry.id.startsWith("compaction_")).map((entry) => entry.parts[0]?.text),
    ).toEqual(["SECOND SUMMARY"]);
    expect(await session.store.getPathLength()).toBe(16);
    expect(await session.getCompactions()).toHaveLength(2);
  });

  it("never separates a tool call from its result", async () => {
    const seen: string[] = [];
    const compact = createCompactFunction({
      summarize: async (prompt) => {
        seen.push(prompt);
        return "S";
      },
      protectHead: 1,
      tailTokenBudget: 0,
      minTailMessages: 1,
    });
    const history: SessionMessage[] = [
      message("h", "head"),
      message("x", "middle"),
      { id: "call", role: "assistant", parts: [{ type: "tool-call", toolCallId: "t1", toolName: "lookup" }] },
      { id: "result", role: "tool", parts: [{ type: "tool-result", toolCallId: "t1", output: "42" }] },
    ];
    const result = await compact(history);
    // The tail must keep the result; the cut moves before the call so the pair stays together.
    expect(result).toEqual({ fromMessageId: "x", toMessageId: "x", summary: "S" });
  });

  it("compacts automatically past the threshold, refreshes the frozen prompt, and a failure never fails the append", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const session = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat")
      .withContext("soul", { provider: { get: async () => `soul version ${fail ? 1 : 2}` } })
      .onCompaction(
        createCompactFunction({
          summarize: async () => {
            if (fail) throw new Error("model down");
            return "AUTO SUMMARY";
          },
          protectHead: 1,
          tailTokenBudget: 100,
        }),
      )
      .compactAfter(300)
      .onCompactionError((error) => {
        errors.push(error);
        throw new Error("the handler fails too");
      })
      .build();
    expect(await session.context.freezeSystemPrompt()).toContain("soul version 1");
    for (const turn of turns(8)) await session.appendMessage(turn);
    expect(await session.store.getPathLength()).toBe(8);
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toMatch(/model down/);
    fail = false;
    await session.appendMessage(message("m8", "one more turn"));
    const history = await session.getHistory();
    expect(history.some((entry) => entry.parts[0]?.text === "AUTO SUMMARY")).toBe(true);
    expect(await session.context.freezeSystemPrompt()).toContain("soul version 2");
  });

  it("passes the session's token counter the messages, the frozen prompt and the blocks", async () => {
    const inputs: { messages: number; systemPrompt: string; blocks: string[] }[] = [];
    const session = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat")
      .withContext("soul", { provider: { get: async () => "You are terse." } })
      .onCompaction(async () => null)
      .compactAfter(1_000, {
        tokenCounter: ({ messages, systemPrompt, contextBlocks }) => {
          inputs.push({
            messages: messages.length,
            systemPrompt,
            blocks: contextBlocks.map((block) => block.label),
          });
          return 0;
        },
      })
      .build();
    await session.appendMessage(message("a", "hi"));
    expect(inputs.at(-1)?.messages).toBe(1);
    expect(inputs.at(-1)?.systemPrompt).toContain("You are terse.");
    expect(inputs.at(-1)?.blocks).toEqual(["soul"]);
  });
});

describe("clearMessages", () => {
  it("deletes messages, overlays and loaded-skill state", async () => {
    const session = new SessionBuilder(sqliteBackend(temporary.database)).forSession("chat").build();
    await session.appendMessage(message("a", "x"));
    await session.addCompaction("s", "a", "a");
    await session.clearMessages();
    expect(await session.getHistory()).toEqual([]);
    expect(await session.getCompactions()).toEqual([]);
    expect([...(await loadedSkillKeys(session))]).toEqual([]);
    expect(await session.search("x")).toEqual([]);
  });
});
