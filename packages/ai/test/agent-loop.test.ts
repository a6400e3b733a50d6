import { InMemoryContextProvider } from "@contextblocks/core/memory";
import { generateText, type ModelMessage, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { loadedEntriesFromMessages, prepareContextTurn } from "../src/index.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  resultText,
  SKILLS,
  scriptedModel,
  scriptedStreamModel,
  streamedTurnMessages,
  turnMessages,
} from "./helpers.js";

describe("a multi-step agent loop through generateText", () => {
  it("writes memory (replace, append), indexes and searches, loads and unloads a skill, then answers", async () => {
    const store = createStore();
    const context = createContext(store);
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      callTools(1, {
        toolName: "set_context",
        input: { label: "memory", content: "Likes tea.", action: "append" },
      }),
      callTools(2, {
        toolName: "set_context",
        input: {
          label: "notes",
          content: "The staging database lives in eu-west-1 and is rebuilt every Sunday.",
          metadata: { title: "Staging database" },
        },
      }),
      callTools(3, { toolName: "search_context", input: { label: "notes", query: "where is staging?" } }),
      callTools(4, { toolName: "load_context", input: { label: "skills", key: "pdf-forms" } }),
      callTools(5, { toolName: "unload_context", input: { label: "skills", key: "pdf-forms" } }),
      answer("Done: I remembered you and checked the notes."),
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "I'm Ada and I like tea. Where is staging?" }];

    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, messages)),
      stopWhen: stepCountIs(10),
    });

    expect(result.text).toBe("Done: I remembered you and checked the notes.");
    expect(result.steps).toHaveLength(7);
    const calls = model.doGenerateCalls;
    expect(resultText(calls[1], "call-0-0")).toMatch(/^Written to memory\. Usage: \d+% \(\d+\/60 tokens\)$/);
    expect(resultText(calls[2], "call-1-0")).toMatch(/^Written to memory\./);
    expect(resultText(calls[3], "call-2-0")).toBe('Indexed "staging-database" in notes.');
    expect(resultText(calls[4], "call-3-0")).toContain(
      "[staging-database]\nThe staging database lives in eu-west-1",
    );
    expect(resultText(calls[5], "call-4-0")).toBe(SKILLS["pdf-forms"].content);
    expect(resultText(calls[6], "call-5-0")).toBe('Unloaded "pdf-forms" from skills.');

    // The data is in the provider's store, not only in memory.
    expect(store.blocks.get("memory")).toBe("Name: Ada.\nLikes tea.");
    expect(store.entriesOf("notes").get("staging-database")?.content).toContain("eu-west-1");
    expect(context.loadedEntries()).toEqual([]);

    // The next turn: the transcript says the skill was unloaded, so its text is gone from what the model sees.
    const history: ModelMessage[] = [...messages, ...turnMessages(result)];
    expect(loadedEntriesFromMessages(history)).toEqual([]);
    const next = await prepareContextTurn(context, [...history, { role: "user", content: "Thanks!" }]);
    const loadResult = next.messages
      .flatMap((message) => (message.role === "tool" ? message.content : []))
      .find((part) => part.type === "tool-result" && part.toolCallId === "call-4-0");
    expect(loadResult).toMatchObject({
      output: { type: "text", value: "[unloaded: pdf-forms from skills]" },
    });
    expect(JSON.stringify(next.messages)).not.toContain(SKILLS["pdf-forms"].content);
  });

  it("lands both of two set_context appends made in one step (parallel tool calls)", async () => {
    const store = createStore();
    const context = createContext(store);
    await context.setBlock("memory", "Name: Ada.");
    const model = scriptedModel([
      callTools(
        0,
        { toolName: "set_context", input: { label: "memory", content: "Likes tea.", action: "append" } },
        { toolName: "set_context", input: { label: "memory", content: "Lives in Lyon.", action: "append" } },
      ),
      answer("Noted both."),
    ]);

    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Tea, Lyon." }])),
      stopWhen: stepCountIs(5),
    });

    expect(result.steps[0]?.toolCalls).toHaveLength(2);
    const stored = store.blocks.get("memory") ?? "";
    expect(stored.split("\n").sort()).toEqual(["Likes tea.", "Lives in Lyon.", "Name: Ada."]);
    expect(context.getBlock("memory")?.content).toBe(stored);
    expect(resultText(model.doGenerateCalls[1], "call-0-0")).toMatch(/^Written to memory\./);
    expect(resultText(model.doGenerateCalls[1], "call-0-1")).toMatch(/^Written to memory\./);
  });
});

describe("parallel writes to a slow provider", () => {
  it("lands every append of one step, whatever order the provider's writes finish in", async () => {
    const store = createStore();
    const delays = [30, 0, 15];
    const slow = new InMemoryContextProvider({ store, label: "journal" });
    const provider = {
      get: () => slow.get(),
      set: async (content: string) => {
        await new Promise((resolve) => setTimeout(resolve, delays.shift() ?? 0));
        await slow.set(content);
      },
    };
    const context = createContext(store, [{ label: "journal", provider }]);
    const lines = ["one", "two", "three"];
    const model = scriptedModel([
      callTools(
        0,
        ...lines.map((content) => ({
          toolName: "set_context",
          input: { label: "journal", content, action: "append" },
        })),
      ),
      answer("Logged."),
    ]);
    await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Log three lines." }])),
      stopWhen: stepCountIs(3),
    });
    expect((store.blocks.get("journal") ?? "").split("\n").sort()).toEqual(["one", "three", "two"]);
  });
});

describe("the same loop through streamText", () => {
  it("writes, loads and answers, with the same system prompt and tools on every step", async () => {
    const store = createStore();
    const context = createContext(store);
    const model = scriptedStreamModel([
      callTools(
        0,
        { toolName: "set_context", input: { label: "memory", content: "Prefers short answers." } },
        { toolName: "load_context", input: { label: "skills", key: "sql-review" } },
      ),
      answer("Short answer: use bound parameters."),
    ]);

    const prepared = await prepareContextTurn(context, [
      { role: "user", content: "Review my SQL, briefly." },
    ]);
    const result = streamText({ model, ...prepared, stopWhen: stepCountIs(5) });

    expect(await result.text).toBe("Short answer: use bound parameters.");
    expect(store.blocks.get("memory")).toBe("Prefers short answers.");
    const [first, second] = model.doStreamCalls;
    expect(resultText(second, "call-0-0")).toMatch(/^Written to memory\./);
    expect(resultText(second, "call-0-1")).toBe(SKILLS["sql-review"].content);
    expect(second?.prompt[0]).toEqual(first?.prompt[0]);
    expect(JSON.stringify(second?.tools)).toBe(JSON.stringify(first?.tools));
    expect(context.loadedEntries()).toEqual([{ label: "skills", key: "sql-review" }]);
    const history = [...prepared.messages, ...(await streamedTurnMessages(result))];
    expect(loadedEntriesFromMessages(history)).toEqual([{ label: "skills", key: "sql-review" }]);
  });
});
