import { convertToModelMessages, generateText, type ModelMessage, stepCountIs, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import {
  loadedEntriesFromMessages,
  prepareContextTurn,
  replaceUnloadedEntries,
  unloadedPlaceholder,
} from "../src/index.js";
import { comparePrefix } from "../src/test.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  deepFreeze,
  resultText,
  SKILLS,
  scriptedModel,
  turnMessages,
} from "./helpers.js";

const PDF = SKILLS["pdf-forms"].content;
const SQL = SKILLS["sql-review"].content;

function call(toolCallId: string, toolName: string, input: unknown): ModelMessage {
  return { role: "assistant", content: [{ type: "tool-call", toolCallId, toolName, input }] };
}

function result(
  toolCallId: string,
  toolName: string,
  value: string,
  type: "text" | "error-text" = "text",
): ModelMessage {
  return {
    role: "tool",
    content: [{ type: "tool-result", toolCallId, toolName, output: { type, value } }],
  };
}

describe("unloading a skill", () => {
  it("removes its text from later turns, and the placeholder survives a restart", async () => {
    const store = createStore();
    const first = createContext(store);
    const model = scriptedModel([
      callTools(0, { toolName: "load_context", input: { label: "skills", key: "pdf-forms" } }),
      callTools(1, { toolName: "load_context", input: { label: "skills", key: "sql-review" } }),
      callTools(2, { toolName: "unload_context", input: { label: "skills", key: "pdf-forms" } }),
      answer("PDF done, SQL next."),
      answer("Still here."),
    ]);
    const history: ModelMessage[] = [{ role: "user", content: "Fill the form, then review SQL." }];
    const turn1 = await generateText({
      model,
      ...(await prepareContextTurn(first, history)),
      stopWhen: stepCountIs(6),
    });
    history.push(...turnMessages(turn1));
    // Within the turn, the loaded text was visible to the model.
    expect(resultText(model.doGenerateCalls[3], "call-0-0")).toBe(PDF);

    // A restart: a new ContextBlocks on the same store knows nothing loaded; the transcript does.
    const restarted = createContext(store);
    expect(restarted.loadedEntries()).toEqual([]);
    expect(loadedEntriesFromMessages(history)).toEqual([{ label: "skills", key: "sql-review" }]);
    history.push({ role: "user", content: "Anything else?" });
    await generateText({ model, ...(await prepareContextTurn(restarted, history)) });

    const seen = model.doGenerateCalls[4];
    expect(resultText(seen, "call-0-0")).toBe("[unloaded: pdf-forms from skills]");
    expect(resultText(seen, "call-1-0")).toBe(SQL);
    expect(JSON.stringify(seen?.prompt)).not.toContain(PDF);
    // The stored transcript still has the text: the replacement is made for the request only.
    expect(JSON.stringify(history)).toContain(PDF);
  });

  it('tracks a skill whose own text starts with "Error:" as loaded, and unloads it (issue 11, fault 1)', async () => {
    const store = createStore();
    const context = createContext(store);
    const WORDS = "Error: messages are how this skill teaches recovery. Read them aloud.";
    await context.setEntry("skills", "error-drills", WORDS, "Recovering from errors");
    const model = scriptedModel([
      callTools(0, { toolName: "load_context", input: { label: "skills", key: "error-drills" } }),
      answer("Loaded."),
      callTools(1, { toolName: "unload_context", input: { label: "skills", key: "error-drills" } }),
      answer("Unloaded."),
      answer("Next."),
    ]);
    const history: ModelMessage[] = [{ role: "user", content: "Drill errors." }];
    const first = await generateText({
      model,
      ...(await prepareContextTurn(context, history)),
      stopWhen: stepCountIs(3),
    });
    history.push(...turnMessages(first));
    // The model read the skill as a plain result, and the transcript counts it as loaded.
    expect(resultText(model.doGenerateCalls[1], "call-0-0")).toBe(WORDS);
    expect(loadedEntriesFromMessages(history)).toEqual([{ label: "skills", key: "error-drills" }]);

    history.push({ role: "user", content: "Done with it." });
    const second = await generateText({
      model,
      ...(await prepareContextTurn(context, history)),
      stopWhen: stepCountIs(3),
    });
    history.push(...turnMessages(second));
    expect(loadedEntriesFromMessages(history)).toEqual([]);

    history.push({ role: "user", content: "And now?" });
    await generateText({ model, ...(await prepareContextTurn(context, history)) });
    const seen = model.doGenerateCalls[4];
    expect(resultText(seen, "call-0-0")).toBe("[unloaded: error-drills from skills]");
    expect(JSON.stringify(seen?.prompt)).not.toContain("teaches recovery");
  });

  it("reads transcripts written before structured outcomes: a plain text result is a success", () => {
    const messages: ModelMessage[] = [
      call("l1", "load_context", { label: "skills", key: "pdf-forms" }),
      result("l1", "load_context", PDF),
      call("l2", "load_context", { label: "skills", key: "sql-review" }),
      result("l2", "load_context", "Error: some old failure, recorded as plain text"),
      call("l3", "load_context", { label: "skills", key: "juggling" }),
      result("l3", "load_context", "Error: no entry", "error-text"),
    ];
    expect(loadedEntriesFromMessages(messages)).toEqual([
      { label: "skills", key: "pdf-forms" },
      { label: "skills", key: "sql-review" },
    ]);
  });

  it("reads UI tool parts by the outcome object: isError fails, plain strings (older transcripts) succeed", () => {
    const part = (toolCallId: string, key: string, output: unknown) => ({
      type: "tool-load_context" as const,
      toolCallId,
      state: "output-available" as const,
      input: { label: "skills", key },
      output,
    });
    const messages: UIMessage[] = [
      {
        id: "a1",
        role: "assistant",
        parts: [
          part("l1", "pdf-forms", { isError: false, text: "Error: a skill that starts like this" }),
          part("l2", "juggling", { isError: true, text: 'Error: no entry "juggling" in skills.' }),
          part("l3", "sql-review", "older transcript: plain string"),
        ],
      },
    ];
    expect(loadedEntriesFromMessages(messages)).toEqual([
      { label: "skills", key: "pdf-forms" },
      { label: "skills", key: "sql-review" },
    ]);
  });

  it("ignores tool arguments inherited through the prototype (own properties only)", () => {
    const inherited = Object.create({ label: "skills", key: "pdf-forms" }) as Record<string, unknown>;
    const messages: ModelMessage[] = [
      call("l1", "load_context", inherited),
      result("l1", "load_context", PDF),
    ];
    expect(loadedEntriesFromMessages(messages)).toEqual([]);
  });

  it("keeps a load that came after the unload, and leaves failed loads and failed unloads alone", () => {
    const messages: ModelMessage[] = deepFreeze([
      { role: "user", content: "go" },
      call("l1", "load_context", { label: "skills", key: "pdf-forms" }),
      result("l1", "load_context", PDF),
      call("u1", "unload_context", { label: "skills", key: "pdf-forms" }),
      result("u1", "unload_context", 'Unloaded "pdf-forms" from skills.'),
      call("l2", "load_context", { label: "skills", key: "pdf-forms" }),
      result("l2", "load_context", PDF),
      call("l3", "load_context", { label: "skills", key: "juggling" }),
      result("l3", "load_context", 'Error: no entry "juggling" in skills.', "error-text"),
      call("u3", "unload_context", { label: "skills", key: "juggling" }),
      result("u3", "unload_context", 'Unloaded "juggling" from skills.'),
      call("l4", "load_context", { label: "skills", key: "sql-review" }),
      result("l4", "load_context", SQL),
      call("u4", "unload_context", { label: "skills" }),
      result("u4", "unload_context", 'Error: unload_context: "key" is required', "error-text"),
    ]);
    const replaced = replaceUnloadedEntries(messages);
    const values = replaced.flatMap((message) =>
      message.role === "tool"
        ? message.content.map((part) => part.type === "tool-result" && part.output)
        : [],
    );
    expect(values).toEqual([
      { type: "text", value: "[unloaded: pdf-forms from skills]" },
      { type: "text", value: 'Unloaded "pdf-forms" from skills.' },
      { type: "text", value: PDF },
      { type: "error-text", value: 'Error: no entry "juggling" in skills.' },
      { type: "text", value: 'Unloaded "juggling" from skills.' },
      { type: "text", value: SQL },
      { type: "error-text", value: 'Error: unload_context: "key" is required' },
    ]);
    expect(replaced[1]).toBe(messages[1]);
    expect(replaced[6]).toBe(messages[6]);
    expect(loadedEntriesFromMessages(messages)).toEqual([
      { label: "skills", key: "pdf-forms" },
      { label: "skills", key: "sql-review" },
    ]);
  });

  it("pairs each result with its own call when a provider reuses tool call ids across turns", () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "load" },
      call("call_0", "load_context", { label: "skills", key: "pdf-forms" }),
      result("call_0", "load_context", PDF),
      { role: "user", content: "unload" },
      call("call_0", "unload_context", { label: "skills", key: "pdf-forms" }),
      result("call_0", "unload_context", 'Unloaded "pdf-forms" from skills.'),
    ];
    const replaced = replaceUnloadedEntries(messages);
    expect(replaced[2]).toMatchObject({
      content: [{ output: { value: "[unloaded: pdf-forms from skills]" } }],
    });
    expect(replaced[5]).toBe(messages[5]);
    expect(loadedEntriesFromMessages(messages)).toEqual([]);
  });

  it("works on UI messages (static and dynamic tool parts) and the model sees the placeholder", async () => {
    const messages: UIMessage[] = deepFreeze([
      { id: "u1", role: "user", parts: [{ type: "text", text: "Use the PDF skill, then drop it." }] },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-load_context",
            toolCallId: "l1",
            state: "output-available",
            input: { label: "skills", key: "pdf-forms" },
            output: PDF,
          },
          { type: "step-start" },
          {
            type: "dynamic-tool",
            toolName: "unload_context",
            toolCallId: "u1",
            state: "output-available",
            input: { label: "skills", key: "pdf-forms" },
            output: 'Unloaded "pdf-forms" from skills.',
          },
          { type: "text", text: "Done." },
        ],
      },
      { id: "u2", role: "user", parts: [{ type: "text", text: "Thanks." }] },
    ]);
    const context = createContext(createStore());
    const prepared = await prepareContextTurn(context, messages);
    expect(prepared.messages[1]?.parts[1]).toMatchObject({
      type: "tool-load_context",
      output: "[unloaded: pdf-forms from skills]",
    });
    expect(prepared.messages[0]).toBe(messages[0]);
    expect(messages[1]?.parts[1]).toMatchObject({ output: PDF });

    const model = scriptedModel([answer("You're welcome.")]);
    const { system, tools } = prepared;
    await generateText({ model, system, tools, messages: await convertToModelMessages(prepared.messages) });
    expect(resultText(model.doGenerateCalls[0], "l1")).toBe("[unloaded: pdf-forms from skills]");
    expect(JSON.stringify(model.doGenerateCalls[0]?.prompt)).not.toContain(PDF);
  });

  it("can also take effect within a turn, through prepareStep", async () => {
    const context = createContext(createStore());
    const model = scriptedModel([
      callTools(0, { toolName: "load_context", input: { label: "skills", key: "pdf-forms" } }),
      callTools(1, { toolName: "unload_context", input: { label: "skills", key: "pdf-forms" } }),
      answer("done"),
    ]);
    await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "go" }])),
      prepareStep: ({ messages }) => ({ messages: replaceUnloadedEntries(messages) }),
      stopWhen: stepCountIs(5),
    });
    expect(resultText(model.doGenerateCalls[1], "call-0-0")).toBe(PDF);
    expect(resultText(model.doGenerateCalls[2], "call-0-0")).toBe("[unloaded: pdf-forms from skills]");
  });

  it("costs the cache from the replaced result on, once", async () => {
    const context = createContext(createStore());
    const history: ModelMessage[] = [
      { role: "user", content: "load it" },
      call("l1", "load_context", { label: "skills", key: "pdf-forms" }),
      result("l1", "load_context", PDF),
      { role: "assistant", content: "Loaded." },
      { role: "user", content: "now drop it" },
    ];
    const before = await prepareContextTurn(context, history);
    history.push(
      call("u1", "unload_context", { label: "skills", key: "pdf-forms" }),
      result("u1", "unload_context", 'Unloaded "pdf-forms" from skills.'),
      { role: "assistant", content: "Dropped." },
      { role: "user", content: "thanks" },
    );
    const after = await prepareContextTurn(context, history);
    const later = await prepareContextTurn(context, [
      ...history,
      { role: "assistant", content: "ok" },
      { role: "user", content: "bye" },
    ]);
    // The turn after the unload repeats only the messages before the load result...
    expect((await comparePrefix(before, after)).messages).toEqual({ sharedPrefix: 2, previousCount: 5 });
    // ...and from then on the placeholder is stable: every earlier message is repeated.
    expect((await comparePrefix(after, later)).messages).toEqual({ sharedPrefix: 9, previousCount: 9 });
  });

  it("takes a custom placeholder, and can be switched off", async () => {
    const messages: ModelMessage[] = [
      call("l1", "load_context", { label: "skills", key: "pdf-forms" }),
      result("l1", "load_context", PDF),
      call("u1", "unload_context", { label: "skills", key: "pdf-forms" }),
      result("u1", "unload_context", "ok"),
    ];
    const custom = replaceUnloadedEntries(messages, { placeholder: ({ key }) => `(${key} put away)` });
    expect(custom[1]).toMatchObject({
      content: [{ output: { type: "text", value: "(pdf-forms put away)" } }],
    });
    expect(unloadedPlaceholder({ label: "skills", key: "pdf-forms" })).toBe(
      "[unloaded: pdf-forms from skills]",
    );

    const context = createContext(createStore());
    const off = await prepareContextTurn(context, messages, { unload: false });
    expect(off.messages).toEqual(messages);
  });
});
