import { contextTools, loadedSkillKeys, unloadSkill } from "@contextblocks/ai";
import { isContextError } from "@contextblocks/core";
import { InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import {
  type SessionBackend,
  SessionBuilder,
  type SessionEvent,
  type SessionMessage,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { answer, callTool, promptText, scriptedModel, toolResult } from "@contextblocks/test-kit/model";
import { generateText, stepCountIs } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends, type OpenBackend } from "../src/backends.js";

/* `Session` over each backend: what a conversation stores, finds, compacts and clears reads the same. */

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

const turns = (count: number) =>
  Array.from({ length: count }, (_, index) =>
    message(`m${index}`, `turn ${index}: ${"detail ".repeat(40)}`, index % 2 === 0 ? "user" : "assistant"),
  );

describe.each(backends)("Session on $name", (underTest) => {
  let opened: OpenBackend;
  let backend: SessionBackend;
  beforeEach(async () => {
    opened = await underTest.open();
    backend = opened.backend;
  });
  afterEach(() => opened.close());

  it("keeps blocks and frozen prompts of sessions apart, and the prompt survives a restart", async () => {
    const build = (on: SessionBackend, id: string) =>
      new SessionBuilder(on)
        .forSession(id)
        .withContext("memory", { maxTokens: 200 })
        .withCachedPrompt()
        .build();
    const first = build(backend, "one");
    const second = build(backend, "two");
    await first.context.setBlock("memory", "one's fact");
    await second.context.setBlock("memory", "two's fact");
    const prompt = await first.context.freezeSystemPrompt();
    expect(prompt).toContain("one's fact");
    expect(await second.context.freezeSystemPrompt()).toContain("two's fact");
    await first.context.setBlock("memory", "changed later");
    const restarted = build(await opened.restart(), "one");
    expect(await restarted.context.freezeSystemPrompt()).toBe(prompt);
    expect(await restarted.context.refreshSystemPrompt()).toContain("changed later");
  });

  it("set_context writes the session's memory through generateText; a bad call reads as Error text, nothing thrown", async () => {
    const session = new SessionBuilder(backend)
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
    const restarted = new SessionBuilder(await opened.restart())
      .forSession("chat")
      .withContext("memory", { description: "Facts", maxTokens: 50 })
      .build();
    await restarted.context.load();
    expect(restarted.context.getBlock("memory")?.content).toBe("User likes tea.");
  });

  it("unloadSkill replaces the stored load_context result with a marker; loaded keys survive a restart", async () => {
    const store = new InMemoryStore();
    const skills = { "pdf-forms": { content: "PDF FORM INSTRUCTIONS", description: "Forms" } };
    const build = (on: SessionBackend) =>
      new SessionBuilder(on)
        .forSession("chat")
        .withContext("skills", { provider: new InMemorySkillProvider({ store, skills }) })
        .build();
    const session = build(backend);
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
    // The turn stored as a UI message with the tool part, as a chat agent stores it.
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
    const restarted = build(await opened.restart());
    expect([...(await loadedSkillKeys(restarted))]).toEqual(["skills:pdf-forms"]);
    expect(await unloadSkill(restarted, "skills", "pdf-forms")).toBe(true);
    const stored = await restarted.store.getMessage("a1");
    expect(stored?.parts[0]?.output).toEqual({ isError: false, text: "[unloaded: pdf-forms from skills]" });
    expect(JSON.stringify(await restarted.getHistory())).not.toContain("PDF FORM INSTRUCTIONS");
    expect(await unloadSkill(restarted, "skills", "pdf-forms")).toBe(false);
    expect([...(await loadedSkillKeys(build(await opened.restart())))]).toEqual([]);
  });

  it("search finds a message by its words, the message holding them first", async () => {
    const session = new SessionBuilder(backend).forSession("chat").build();
    await session.appendMessage(message("a", "We deploy on Friday afternoon"));
    await session.appendMessage(message("b", "Lunch is at noon", "assistant"));
    const hits = await session.search("when do we deploy?", { limit: 5 });
    expect(hits[0]).toMatchObject({ id: "a", role: "user", content: "We deploy on Friday afternoon" });
    expect(typeof hits[0]?.createdAt).toBe("string");
    expect(await session.search("zebra")).toEqual([]);
  });

  it("a question that asks when ranks the turn that says when first, without message times", async () => {
    const session = new SessionBuilder(backend).forSession("chat").build();
    const small = ["Lunch is at noon", "The garden needs water", "Trains run late", "Tea or coffee?"];
    const chat = [
      "The concert hall is big",
      ...small,
      "We went to the concert with my sister last week",
      ...small.map((text) => `${text} again`),
    ];
    for (const [index, text] of chat.entries())
      await session.appendMessage(message(`m${index}`, text, index % 2 === 0 ? "user" : "assistant"));
    // By its words alone the shorter turn ranks first; asked when, the turn that says when does.
    expect(ids(await session.search("tell me about the concert", { limit: 5 }))[0]).toBe("m0");
    expect(ids(await session.search("When did they go to the concert?", { limit: 5 }))[0]).toBe("m5");
  });

  it("compaction summarises the middle through generateText, keeps head and tail, and updates the summary next time", async () => {
    const model = scriptedModel([answer("FIRST SUMMARY"), answer("SECOND SUMMARY")]);
    const summarize = async (prompt: string) => (await generateText({ model, prompt })).text;
    const session = new SessionBuilder(backend)
      .forSession("chat")
      .onCompaction(
        createCompactFunction({ summarize, protectHead: 2, tailTokenBudget: 150, minTailMessages: 2 }),
      )
      .build();
    const events: SessionEvent[] = [];
    for (const turn of turns(10)) await session.appendMessage(turn);
    session.subscribe((event) => events.push(event));
    const outcome = await session.compact();
    if (!outcome?.compacted) throw new Error(`not compacted: ${JSON.stringify(outcome)}`);
    const { compacted: _, ...first } = outcome;
    expect(events).toEqual([
      {
        type: "compaction-added",
        sessionId: "chat",
        compaction: {
          id: expect.any(String),
          summary: first?.summary,
          fromMessageId: first?.fromMessageId,
          toMessageId: first?.toMessageId,
          createdAt: expect.any(String),
        },
      },
      {
        type: "compacted",
        sessionId: "chat",
        ...first,
        messages: expect.any(Number),
        tokensBefore: expect.any(Number),
        tokensAfter: expect.any(Number),
      },
    ]);
    const compacted = events[1];
    if (compacted?.type !== "compacted") throw new Error("no compacted event");
    // m2 up to the tail: the range the overlay covers, and the history it shrank.
    expect(compacted.messages).toBeGreaterThan(1);
    expect(compacted.tokensAfter).toBeLessThan(compacted.tokensBefore);
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
    expect(promptText(model.doGenerateCalls[1])).toContain("PREVIOUS SUMMARY:\nFIRST SUMMARY");
    const restarted = new SessionBuilder(await opened.restart()).forSession("chat").build();
    const after = await restarted.getHistory();
    expect(
      after.filter((entry) => entry.id.startsWith("compaction_")).map((entry) => entry.parts[0]?.text),
    ).toEqual(["SECOND SUMMARY"]);
    expect(await restarted.store.getPathLength()).toBe(16);
    expect(await restarted.getCompactions()).toHaveLength(2);
  });

  it("compacts automatically past the threshold, refreshes the frozen prompt, and a failure never fails the append", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const session = new SessionBuilder(backend)
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
    const session = new SessionBuilder(backend)
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

  it("clearMessages deletes messages, overlays and loaded-skill state, and nothing of another session", async () => {
    const session = new SessionBuilder(backend).forSession("chat").build();
    const other = new SessionBuilder(backend).forSession("other").build();
    await session.appendMessage(message("a", "xylophone"));
    await other.appendMessage(message("o", "xylophone too"));
    await session.addCompaction("s", "a", "a");
    await session.clearMessages();
    expect(await session.getHistory()).toEqual([]);
    expect(await session.getCompactions()).toEqual([]);
    expect([...(await loadedSkillKeys(session))]).toEqual([]);
    expect(await session.search("xylophone")).toEqual([]);
    expect(ids(await other.getHistory())).toEqual(["o"]);
    expect(ids(await other.search("xylophone"))).toEqual(["o"]);
  });

  it("appendMessages refuses what is not an array of messages (a hole included) by name, storing nothing", async () => {
    const session = new SessionBuilder(backend).forSession("chat").build();
    await session.appendMessage(message("a", "kept"));
    const refusals: [unknown, RegExp][] = [
      ["a", /appendMessages: expected an array of messages, got "a"/],
      [null, /appendMessages: expected an array of messages, got null/],
      [message("b", "one"), /appendMessages: expected an array of messages/],
      // biome-ignore lint/suspicious/noSparseArray: a client's array with a hole
      [[, message("c", "after a hole")], /appendMessages: not a SessionMessage: expected an object/],
    ];
    for (const [value, reason] of refusals) {
      const error = await session
        .appendMessages(value as SessionMessage[], undefined, { source: "client" })
        .catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code, String(error)).toBe("INVALID_INPUT");
      expect((error as Error).message).toMatch(reason);
    }
    expect(ids(await (await restartedSession()).getHistory())).toEqual(["a"]);
  });

  it("importMessage refuses a time outside the years 1 to 9999 (INVALID_INPUT naming it), storing nothing; one inside is kept as ISO text", async () => {
    const session = new SessionBuilder(backend).forSession("chat").build();
    await session.appendMessage(message("a", "kept"));
    // Every time JavaScript holds is a Date; Postgres reads only four-digit years, and ISO text sorts as
    // time only with them, so a store could not keep these the same way.
    const outside: unknown[] = [
      8.64e15,
      -8.64e15,
      "+010000-01-01T00:00:00Z",
      new Date("-000100-01-01T00:00:00Z"),
      "0000-12-31T23:59:59.999Z",
      Date.UTC(10_000, 0, 1),
    ];
    for (const createdAt of outside) {
      const error = await session
        .importMessage(message("old", "an old tale"), "a", { createdAt: createdAt as string })
        .catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code, String(error)).toBe("INVALID_INPUT");
      expect((error as Error).message).toMatch(/importMessage: createdAt .*years 1 to 9999/);
    }
    const restarted = await restartedSession();
    expect(ids(await restarted.getHistory())).toEqual(["a"]);
    await restarted.importMessage(message("first", "the first day"), "a", {
      createdAt: "0001-01-01T00:00:00Z",
    });
    await restarted.importMessage(message("last", "the last day"), "first", {
      createdAt: "9999-12-31T23:59:59.999-00:00",
    });
    const history = await (await restartedSession()).getHistory();
    expect(history.map((entry) => [entry.id, entry.createdAt ?? null])).toEqual([
      ["a", null],
      ["first", "0001-01-01T00:00:00.000Z"],
      ["last", "9999-12-31T23:59:59.999Z"],
    ]);
  });

  const restartedSession = async () => new SessionBuilder(await opened.restart()).forSession("chat").build();
});
