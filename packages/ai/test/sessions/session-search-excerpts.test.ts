import { estimateTokens } from "@contextblocks/core";
import { isWellFormed } from "@contextblocks/core/store-kit";
import { SessionManager, type SessionMessage } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { searchExcerpts, sessionSearchTool } from "../../src/index.js";
import { answer, callTools, resultText, scriptedModel } from "../helpers.js";

function message(id: string, text: string, role = "user", createdAt?: Date): SessionMessage {
  return { id, role, parts: [{ type: "text", text }], ...(createdAt === undefined ? {} : { createdAt }) };
}

describe("session_search: hits with the turns around them, within a token budget", () => {
  it("shows the answer after the turn that matched, under its day, through a real tool call", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    const day = new Date("2023-05-08T13:56:00Z");
    await manager
      .getSession(chat.id)
      .appendMessage(message("q", "What are you researching these days?", "user", day));
    await manager
      .getSession(chat.id)
      .appendMessage(message("a", "Adoption agencies, mostly.", "assistant", day));
    await manager.getSession(chat.id).appendMessage(message("n", "Good luck with it.", "user", day));
    const model = scriptedModel([
      callTools(0, { toolName: "session_search", input: { query: "researching" } }),
      answer("ok"),
    ]);
    await generateText({
      model,
      prompt: "what was I researching?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(3),
    });
    const text = resultText(model.doGenerateCalls[1], "call-0-0");
    // The hit is the question, under the day its message carries (not the day it was stored); the answer
    // and the turn after it are its context (their turns before hold the word).
    expect(text).toMatch(
      /^--- 8 May 2023\n> user: What are you researching these days\?\n {2}assistant: Adoption agencies, mostly\.\n {2}user: Good luck with it\.$/,
    );
  });

  it("shows the neighbours the search kept as context of a hit, before or after it, capped", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    const session = manager.getSession(chat.id);
    const long = `Mostly ${"the paperwork and the interviews and the home visits ".repeat(20)}`;
    await session.appendMessage(message("q", "Which agencies did you call last week?"));
    await session.appendMessage(message("a", "Adoption agencies in the city.", "assistant"));
    await session.appendMessage(message("n", long));
    const hits = await manager.search("adoption", { limit: 10 });
    // The search ranked the question before the answer and the turn after it, and kept both as its context.
    expect(hits.map((hit) => [hit.id, hit.matchedBy])).toEqual([["a", "text"]]);
    expect(hits[0]?.context?.map((turn) => [turn.id, turn.position])).toEqual([
      ["q", "before"],
      ["n", "after"],
    ]);
    const model = scriptedModel([
      callTools(0, { toolName: "session_search", input: { query: "adoption" } }),
      answer("ok"),
    ]);
    await generateText({
      model,
      prompt: "which agencies?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(3),
    });
    const lines = resultText(model.doGenerateCalls[1], "call-0-0").split("\n");
    expect(lines[1]).toBe("  user: Which agencies did you call last week?");
    expect(lines[2]).toBe("> assistant: Adoption agencies in the city.");
    // The long turn after it, cut: the tool shows context, not a second hit.
    expect(lines[3]).toMatch(/^ {2}user: Mostly the paperwork .*…$/);
    expect(lines).toHaveLength(4);
  });

  it("keeps a call within maxTokens however long and many the hits are, every hit shown first", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    const filler =
      "and then we talked about the weather, the garden, the neighbours and the week ahead ".repeat(6);
    for (let index = 0; index < 30; index++) {
      await manager
        .getSession(chat.id)
        .appendMessage(
          message(`m${index}`, `${index % 2 === 0 ? "Hiking" : filler} trip number ${index} ${filler}`),
        );
    }
    const result = await searchExcerpts(manager, "hiking trip", { limit: 10 });
    expect(estimateTokens(result.text ?? "")).toBeLessThanOrEqual(300);
    expect(result.turns.filter((turn) => turn.hit)).toHaveLength(10);
    // A long hit is cut around its matching word, not from its start only.
    const small = await searchExcerpts(manager, "hiking", { limit: 1, maxTokens: 40 });
    expect(small.text).toMatch(/Hiking trip number/);
    expect(estimateTokens(small.text ?? "")).toBeLessThanOrEqual(40);
  });

  it("cuts a pasted file's excerpt from its first 64 kB: a word only past them shows the file's start", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    const log = "0042 ok\n".repeat(125_000); // 1 MB
    await manager
      .getSession(chat.id)
      .appendMessage(message("early", `Build log, deploy at the end:\n${log}`));
    await manager.getSession(chat.id).appendMessage(message("late", `Release notes ${log} zebra crossing`));
    const result = await searchExcerpts(manager, "zebra deploy", { limit: 10 });
    const lines = (result.text ?? "").split("\n").filter((line) => line.startsWith(">"));
    expect(lines).toHaveLength(2);
    // Around the word where it is in the first 64 kB; from the start, cut, where it is only past them.
    expect(lines.find((line) => line.includes("deploy"))).toMatch(
      /^> user: Build log, deploy at the end: 0042 ok .*…$/,
    );
    expect(lines.find((line) => line.includes("Release"))).toMatch(
      /^> user: Release notes 0042 ok 0042 ok .*…$/,
    );
    expect(result.text).not.toContain("zebra");
    expect(estimateTokens(result.text ?? "")).toBeLessThanOrEqual(300);
  });

  it("never cuts a character in two: a hit and its turns of emoji read as well-formed text", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    const session = manager.getSession(chat.id);
    // Astral characters (two UTF-16 units each) at odd and even offsets, no space to cut at.
    for (const [index, padding] of ["", "x"].entries()) {
      await session.appendMessage(
        message(`q${index}`, `${padding}${"😀".repeat(300)} zebra ${"😀".repeat(300)}`),
      );
      await session.appendMessage(message(`a${index}`, `${padding}${"🐘".repeat(300)}`, "assistant"));
    }
    const model = scriptedModel([
      callTools(0, { toolName: "session_search", input: { query: "zebra" } }),
      answer("ok"),
    ]);
    await generateText({
      model,
      prompt: "the zebra?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(3),
    });
    const text = resultText(model.doGenerateCalls[1], "call-0-0");
    expect(text.match(/> user: …😀+ zebra 😀+…/gu)).toHaveLength(2);
    expect(text).toContain("🐘…");
    // A lone surrogate has no UTF-8 form: some model APIs refuse a request that holds one as invalid JSON.
    expect(isWellFormed(text)).toBe(true);
  });

  it("refuses options that are not positive whole numbers by name, before any search", async () => {
    const manager = new SessionManager(inMemoryBackend());
    // NaN or Infinity as `hitCharacters` once cut the hits shorter forever, and the agent's call never returned.
    for (const [name, value] of [
      ["hitCharacters", Number.NaN],
      ["hitCharacters", Number.POSITIVE_INFINITY],
      ["maxTokens", -1],
      ["neighbourCharacters", 0],
      ["limit", "5"],
    ] as const) {
      const options = { [name]: value } as Parameters<typeof searchExcerpts>[2];
      expect(() => sessionSearchTool(manager, options), name).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(name) }),
      );
      await expect(searchExcerpts(manager, "zebra", options), name).rejects.toMatchObject({
        code: "INVALID_CONFIG",
        message: expect.stringContaining(`${name} must be a positive whole number`),
      });
    }
  });

  it("returns null text and no turns when nothing matches", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("Chat");
    await manager.getSession(chat.id).appendMessage(message("a", "hello"));
    expect(await searchExcerpts(manager, "zebra")).toEqual({ text: null, turns: [] });
  });
});
