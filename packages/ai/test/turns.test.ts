import type { ContextBlocks } from "@contextblocks/core";
import { REMINDER_PREAMBLE } from "@contextblocks/core";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { contextTools, prepareContextTurn } from "../src/index.js";
import { assertStablePrefix, comparePrefix } from "../src/test.js";
import {
  allUserTexts,
  answer,
  callTools,
  createContext,
  createStore,
  lastUserTexts,
  scriptedModel,
  systemSeen,
  toolsSeen,
  turnMessages,
} from "./helpers.js";

describe("across turns", () => {
  it("sends a byte-identical system prompt and tool definitions while writes happen; reminders carry the change", async () => {
    const store = createStore();
    let today = "2025-03-01";
    let context: ContextBlocks = createContext(store, [], { today: () => today });
    const model = scriptedModel([
      // turn 1
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      answer("Hello Ada."),
      // turn 2
      callTools(1, {
        toolName: "set_context",
        input: { label: "memory", content: "Likes tea.", action: "append" },
      }),
      callTools(2, {
        toolName: "set_context",
        input: { label: "notes", content: "Deploys happen on Tuesdays.", metadata: { title: "Deploys" } },
      }),
      answer("Noted."),
      // turn 3 (after a restart)
      answer("It is Sunday."),
      // turn 4 (after a refresh)
      answer("Refreshed."),
    ]);
    const history: ModelMessage[] = [];
    const turn = async (text: string) => {
      history.push({ role: "user", content: text });
      const prepared = await prepareContextTurn(context, history);
      const result = await generateText({ model, ...prepared, stopWhen: stepCountIs(5) });
      history.push(...turnMessages(result));
      return prepared;
    };

    const first = await turn("Hi, I'm Ada.");
    today = "2025-03-02";
    const second = await turn("I like tea. Deploys are on Tuesdays.");
    // A restart: a new ContextBlocks on the same store, same history.
    context = createContext(store, [], { today: () => today });
    const third = await turn("What day is it?");

    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(6);
    // System prompt and tool definitions: byte-identical on every call of turns 1–3, restart included.
    for (const call of calls.slice(1)) {
      expect(systemSeen(call)).toBe(systemSeen(calls[0]));
      expect(toolsSeen(call)).toBe(toolsSeen(calls[0]));
    }
    expect(systemSeen(calls[0])).toContain("Today is 2025-03-01.");
    await assertStablePrefix(
      calls[0] as NonNullable<(typeof calls)[0]>,
      calls[5] as NonNullable<(typeof calls)[0]>,
    );
    await assertStablePrefix(first, third);
    // Cache cost of a standing reminder: it moves to each new user message, so the next request repeats the
    // previous one's messages only up to (not including) the user message that carried it.
    const moved = await comparePrefix(second, third);
    expect(moved.identical).toBe(true);
    expect(second.messages).toHaveLength(5);
    expect(moved.messages).toEqual({ sharedPrefix: 4, previousCount: 5 });
    expect(moved.message).toContain(
      "repeats 4 of the previous 5 messages; from message 5 on the cache is rebuilt",
    );
    expect((await comparePrefix(first, second)).messages).toEqual({ sharedPrefix: 1, previousCount: 1 });
    expect(second.tools).toBe(first.tools);

    // Turn 1: nothing changed, no reminder.
    expect(allUserTexts(calls[0]).some((text) => text.startsWith(REMINDER_PREAMBLE))).toBe(false);
    // Turn 2 and 3: the new date reaches the model at the end of the newest user message, on every step,
    // and nowhere else (the earlier user messages stay as they were sent).
    for (const call of calls.slice(2)) {
      const texts = lastUserTexts(call);
      expect(texts.at(-1)).toMatch(new RegExp(`^${REMINDER_PREAMBLE}`));
      expect(texts.at(-1)).toContain("Today is 2025-03-02.");
      expect(allUserTexts(call).filter((text) => text.startsWith(REMINDER_PREAMBLE))).toHaveLength(1);
    }
    expect(lastUserTexts(calls[5])[0]).toBe("What day is it?");
    // The reminder is not stored in the transcript.
    expect(JSON.stringify(history)).not.toContain(REMINDER_PREAMBLE);

    // The one deliberate rebuild: the change moves into the system prompt and the reminder disappears.
    await context.refreshSystemPrompt();
    const fourth = await turn("Refresh, please.");
    const refreshed = calls[6];
    expect(systemSeen(refreshed)).toContain("Today is 2025-03-02.");
    expect(systemSeen(refreshed)).toContain("Name: Ada.\nLikes tea.");
    expect(allUserTexts(refreshed).some((text) => text.startsWith(REMINDER_PREAMBLE))).toBe(false);
    expect(toolsSeen(refreshed)).toBe(toolsSeen(calls[0]));

    const comparison = await comparePrefix(third, fourth, { context });
    expect(comparison.identical).toBe(false);
    expect(comparison.tools.identical).toBe(true);
    expect(comparison.system.changedBlocks).toEqual(["memory", "notes", "environment"]);
    expect(comparison.message).toContain("blocks changed: memory, notes, environment");
  });

  it("keeps tool definitions byte-identical through writes, and returns the same ToolSet object", async () => {
    const store = createStore();
    const context = createContext(store);
    const tools = contextTools(context);
    const before = await comparePrefix({ tools }, { tools });
    expect(before.identical).toBe(true);
    await context.setBlock("memory", "Something new.");
    await context.setEntry("notes", "a", "A note.");
    await context.setEntry("skills", "new-skill", "Do things.", "A new skill");
    expect(contextTools(context)).toBe(tools);
    const restarted = contextTools(createContext(store));
    expect(restarted).not.toBe(tools);
    expect((await comparePrefix({ tools }, { tools: restarted })).identical).toBe(true);
  });
});
