import { InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import { SessionBuilder, SessionManager, type SessionMessage } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import {
  contextPipeline,
  contextTools,
  loadedSkillKeys,
  SessionHistoryPlugin,
  sessionSearchTool,
  unloadSkill,
} from "../../src/index.js";
import { answer, callTools, resultText, scriptedModel } from "../helpers.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

describe("the AI SDK parts of sessions, on the in-memory backend", () => {
  it("SessionHistoryPlugin stores a turn with a set_context call and replays it after a restart", async () => {
    const backend = inMemoryBackend();
    const build = () =>
      new SessionBuilder(inMemoryBackend({ sessions: backend.sessions, blocks: backend.blocks }))
        .forSession("chat")
        .withContext("memory", { description: "Facts", maxTokens: 100 })
        .withCachedPrompt()
        .build();
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      answer("Noted."),
      answer("You are Ada."),
    ]);
    const turn = async (prompt: string) => {
      const session = build();
      const pipeline = contextPipeline({
        model,
        context: session.context,
        plugins: [new SessionHistoryPlugin("history", { session })],
        stateStore: backend.runState,
      });
      return (
        await generateText({ model: pipeline.model, tools: pipeline.tools, prompt, stopWhen: stepCountIs(3) })
      ).text;
    };
    expect(await turn("I'm Ada.")).toBe("Noted.");
    expect(await turn("Who am I?")).toBe("You are Ada.");
    const history = await build().getHistory();
    expect(
      history.map((entry) => `${entry.role}: ${entry.parts.map((part) => part.type).join(",")}`),
    ).toEqual([
      "user: text",
      "assistant: tool-set_context",
      "assistant: text",
      "user: text",
      "assistant: text",
    ]);
    const restarted = build();
    await restarted.context.load();
    expect(restarted.context.getBlock("memory")?.content).toBe("Name: Ada.");
  });

  it("unloadSkill replaces the stored load_context result; loadedSkillKeys reads the history", async () => {
    const store = new InMemoryStore();
    const skills = { "pdf-forms": { content: "PDF FORM INSTRUCTIONS", description: "Forms" } };
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend)
      .forSession("chat")
      .withContext("skills", { provider: new InMemorySkillProvider({ store, skills }) })
      .build();
    const model = scriptedModel([
      callTools(0, { toolName: "load_context", input: { label: "skills", key: "pdf-forms" } }),
      answer("ok"),
    ]);
    await session.context.load();
    const result = await generateText({
      model,
      prompt: "fill the form",
      tools: contextTools(session.context),
      stopWhen: stepCountIs(3),
    });
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
    expect([...(await loadedSkillKeys(session))]).toEqual(["skills:pdf-forms"]);
    expect(await unloadSkill(session, "skills", "pdf-forms")).toBe(true);
    expect((await session.store.getMessage("a1"))?.parts[0]?.output).toEqual({
      isError: false,
      text: "[unloaded: pdf-forms from skills]",
    });
    expect(JSON.stringify(await session.getHistory())).not.toContain("PDF FORM INSTRUCTIONS");
    expect(await unloadSkill(session, "skills", "pdf-forms")).toBe(false);
    expect([...(await loadedSkillKeys(session))]).toEqual([]);
  });

  it("unloadSkill and loadedSkillKeys take the placeholder written and read as unloaded", async () => {
    const session = new SessionBuilder(inMemoryBackend())
      .forSession("chat")
      .withContext("skills", { provider: new InMemorySkillProvider({ store: new InMemoryStore() }) })
      .build();
    await session.appendMessage({
      id: "a1",
      role: "assistant",
      parts: [
        {
          type: "dynamic-tool",
          toolName: "load_context",
          toolCallId: "c1",
          state: "output-available",
          input: { label: "skills", key: "deploy" },
          output: "DEPLOY STEPS",
        },
      ],
    });
    const options = { placeholder: ({ key }: { key: string }) => `[skill unloaded: ${key}]` };
    expect(await unloadSkill(session, "skills", "deploy", options)).toBe(true);
    expect((await session.store.getMessage("a1"))?.parts[0]?.output).toBe("[skill unloaded: deploy]");
    expect([...(await loadedSkillKeys(session, options))]).toEqual([]);
    // Without the option, that text is not the placeholder: the result still reads as loaded.
    expect([...(await loadedSkillKeys(session))]).toEqual(["skills:deploy"]);
  });

  it("sessionSearchTool searches every session of the manager; an empty query reads as Error text", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const one = await manager.create("One");
    await manager.getSession(one.id).appendMessage(message("o1", "the deployment is on Friday"));
    const model = scriptedModel([
      callTools(0, { toolName: "session_search", input: { query: "Friday deployment" } }),
      callTools(1, { toolName: "session_search", input: { query: "x".repeat(10) } }),
      callTools(2, { toolName: "session_search", input: { query: " \n " } }),
      answer("ok"),
    ]);
    await generateText({
      model,
      prompt: "when?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(5),
    });
    expect(resultText(model.doGenerateCalls[1], "call-0-0")).toMatch(
      /^--- .*\n> user: the deployment is on Friday/,
    );
    expect(resultText(model.doGenerateCalls[2], "call-1-0")).toBe("No results found.");
    expect(resultText(model.doGenerateCalls[3], "call-2-0")).toBe(
      'Error: session_search: "query" is empty; say what to look for',
    );
  });

  it("sessionSearchTool answers arguments of the wrong type or missing as Error text, never a tool error", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const one = await manager.create("One");
    await manager.getSession(one.id).appendMessage(message("o1", "the deployment is on Friday"));
    const calls = [
      { toolName: "session_search", input: { query: 5 } },
      { toolName: "session_search", input: { query: null } },
      { toolName: "session_search", input: {} },
      { toolName: "session_search", input: { query: ["Friday"] } },
      { toolName: "session_search", input: "[]" },
      { toolName: "session_search", input: { query: "Friday", extra: "ignored" } },
      // Nested too deeply for the SDK to copy the step's messages: before, a RangeError out of generateText.
      { toolName: "session_search", input: `{"query":${"[".repeat(5000)}${"]".repeat(5000)}}` },
    ];
    const model = scriptedModel([callTools(0, ...calls), answer("ok")]);
    const result = await generateText({
      model,
      prompt: "when?",
      tools: sessionSearchTool(manager),
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]?.content.filter((part) => part.type === "tool-error")).toEqual([]);
    expect(result.text).toBe("ok");
    const seen = calls.map((_, index) => resultText(model.doGenerateCalls[1], `call-0-${index}`));
    expect(seen.slice(0, 5)).toEqual([
      'Error: session_search: "query" must be a string, got number 5',
      'Error: session_search: "query" is required',
      'Error: session_search: "query" is required',
      'Error: session_search: "query" must be a string, got an array',
      "Error: session_search expects an object of arguments, got an array",
    ]);
    expect(seen[5]).toMatch(/^--- .*\n> user: the deployment is on Friday/);
    expect(seen[6]).toBe(
      "Error: session_search: the arguments nest arrays or objects deeper than 100 levels; send one flat object of the fields the tool lists",
    );
  });

  it("sessionSearchTool's definition is what its zod schema gave: the cached tool prefix is unchanged", async () => {
    const model = scriptedModel([answer("ok")]);
    await generateText({
      model,
      prompt: "hi",
      tools: sessionSearchTool(new SessionManager(inMemoryBackend())),
    });
    expect(model.doGenerateCalls[0]?.tools).toEqual([
      {
        type: "function",
        name: "session_search",
        description:
          "Search past conversations for relevant context. Searches across all sessions; each hit (marked >) comes with the turns around it.",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { query: { type: "string", description: "Search query" } },
          required: ["query"],
          additionalProperties: false,
        },
      },
    ]);
    expect(JSON.stringify(model.doGenerateCalls[0]?.tools?.[0])).toContain(
      '"inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"query":{"type":"string","description":"Search query"}},"required":["query"],"additionalProperties":false}',
    );
  });
});
