import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { prepareContextTurn } from "../src/index.js";
import {
  answer,
  callTools,
  lastUserTexts,
  scriptedModel,
  systemSeen,
  toolsSeen,
  turnMessages,
} from "./helpers.js";

describe("the README's agent loop", () => {
  it("runs as written, with a mock model in place of openai()", async () => {
    let date = "Sat Mar 01 2025";
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      callTools(1, { toolName: "load_context", input: { label: "skills", key: "haiku" } }),
      answer("Tea steeps in silence..."),
      answer("It is Sunday."),
    ]);

    // ── as in the README ──
    const store = new InMemoryStore();
    const skills = { haiku: { content: "Three lines: 5, 7, 5 syllables.", description: "Writing haiku" } };
    const context = new ContextBlocks(
      [
        { label: "soul", provider: { get: async () => "You are a concise assistant." } },
        { label: "memory", description: "Facts about the user", maxTokens: 1_000 },
        { label: "today", provider: { get: async () => date }, whenChanged: "remind" },
        { label: "skills", provider: new InMemorySkillProvider({ store, skills }) },
      ],
      new InMemoryContextProvider({ store, label: "_system_prompt" }),
      (label) => new InMemoryContextProvider({ store, label }),
    );
    const history: ModelMessage[] = [];
    async function chat(text: string): Promise<string> {
      history.push({ role: "user", content: text });
      const result = await generateText({
        model,
        ...(await prepareContextTurn(context, history)),
        stopWhen: stepCountIs(8),
      });
      history.push(...turnMessages(result));
      return result.text;
    }
    // ──

    expect(await chat("I'm Ada. Write me a haiku about tea.")).toBe("Tea steeps in silence...");
    date = "Sun Mar 02 2025";
    expect(await chat("What day is it?")).toBe("It is Sunday.");

    expect(store.blocks.get("memory")).toBe("Name: Ada.");
    const [first, , , last] = model.doGenerateCalls;
    expect(systemSeen(last)).toBe(systemSeen(first));
    expect(toolsSeen(last)).toBe(toolsSeen(first));
    expect(lastUserTexts(last).at(-1)).toContain("Sun Mar 02 2025");
  });
});
