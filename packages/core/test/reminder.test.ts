import { describe, expect, it } from "vitest";
import { ContextBlocks, type ContextConfig, REMINDER_PREAMBLE } from "../src/index.js";
import { InMemoryContextProvider, InMemoryStore } from "../src/memory/index.js";
import { renderReminder } from "../src/reminder.js";
import { ChangingProvider, RecordingProvider, RULE } from "./helpers.js";

function setup(initial: string | null = "Today is 2026-03-01.") {
  const environment = new ChangingProvider(initial);
  const memory = new RecordingProvider("Likes tea.");
  const configs: ContextConfig[] = [
    { label: "soul", provider: new ChangingProvider("Be kind.") },
    { label: "environment", provider: environment, whenChanged: "remind" },
    { label: "memory", provider: memory },
  ];
  return { environment, memory, configs };
}

describe("reminder()", () => {
  it("is null when nothing is frozen yet, and reads nothing", async () => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    expect(await context.reminder()).toBeNull();
    expect(environment.get).not.toHaveBeenCalled();
  });

  it("is null when nothing is frozen yet with an empty prompt store (and freezes nothing)", async () => {
    const { configs } = setup();
    const store = new RecordingProvider(null);
    const context = new ContextBlocks(configs, store);
    expect(await context.reminder()).toBeNull();
    expect(store.set).not.toHaveBeenCalled();
  });

  it("is null while the remind blocks render as in the frozen prompt", async () => {
    const { configs } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    expect(await context.reminder()).toBeNull();
    expect(await context.reminder()).toBeNull();
  });

  it("returns the changed block's current section under the preamble", async () => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    const frozen = await context.freezeSystemPrompt();
    environment.value = "Today is 2026-03-02.";
    expect(await context.reminder()).toBe(
      `${REMINDER_PREAMBLE}\n\n${RULE}\nENVIRONMENT [readonly]\n${RULE}\nToday is 2026-03-02.`,
    );
    expect(await context.freezeSystemPrompt()).toBe(frozen);
  });

  it("the preamble says the values replace the system prompt's copies", () => {
    expect(REMINDER_PREAMBLE).toBe(
      "These context blocks changed after the system prompt was written. Their current values below replace the ones in the system prompt.",
    );
  });

  it("re-reads the remind blocks on every call, and only them", async () => {
    const { configs, environment, memory } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    const before = memory.get.mock.calls.length;
    await context.reminder();
    await context.reminder();
    expect(environment.get).toHaveBeenCalledTimes(3);
    expect(memory.get).toHaveBeenCalledTimes(before);
  });

  it("repeats on every call until a refresh, then disappears", async () => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    environment.value = "Today is 2026-03-02.";
    const first = await context.reminder();
    expect(first).not.toBeNull();
    expect(await context.reminder()).toBe(first);
    expect(await context.reminder()).toBe(first);
    const refreshed = await context.refreshSystemPrompt();
    expect(refreshed).toContain("Today is 2026-03-02.");
    expect(await context.reminder()).toBeNull();
  });

  it("disappears without a refresh when the value goes back to the frozen one", async () => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    environment.value = "Today is 2026-03-02.";
    expect(await context.reminder()).not.toBeNull();
    environment.value = "Today is 2026-03-01.";
    expect(await context.reminder()).toBeNull();
  });

  it("survives a restart: it compares against the stored prompt", async () => {
    const store = new InMemoryStore();
    const first = setup();
    const before = new ContextBlocks(first.configs, new InMemoryContextProvider({ store }));
    await before.freezeSystemPrompt();

    const second = setup("Today is 2026-03-02.");
    const after = new ContextBlocks(second.configs, new InMemoryContextProvider({ store }));
    const reminder = await after.reminder();
    expect(reminder).toBe(
      `${REMINDER_PREAMBLE}\n\n${RULE}\nENVIRONMENT [readonly]\n${RULE}\nToday is 2026-03-02.`,
    );
    // The stored prompt was not replaced by the reminder check.
    expect(await after.freezeSystemPrompt()).toContain("Today is 2026-03-01.");

    const third = setup("Today is 2026-03-01.");
    expect(
      await new ContextBlocks(third.configs, new InMemoryContextProvider({ store })).reminder(),
    ).toBeNull();
  });

  it("ignores changes to blocks that are not remind blocks", async () => {
    const { configs, memory } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    await context.setBlock("memory", "Likes coffee now.");
    memory.value = "Changed behind our back.";
    expect(await context.reminder()).toBeNull();
  });

  it("lists only the changed remind blocks, in declaration order", async () => {
    const date = new ChangingProvider("date: 1");
    const branch = new ChangingProvider("branch: main");
    const todo = new ChangingProvider("todo: none");
    const context = new ContextBlocks([
      { label: "date", provider: date, whenChanged: "remind" },
      { label: "branch", provider: branch, whenChanged: "remind" },
      { label: "todo", provider: todo, whenChanged: "remind" },
    ]);
    await context.freezeSystemPrompt();
    todo.value = "todo: ship";
    date.value = "date: 2";
    expect(await context.reminder()).toBe(
      [
        REMINDER_PREAMBLE,
        `${RULE}\nDATE [readonly]\n${RULE}\ndate: 2`,
        `${RULE}\nTODO [readonly]\n${RULE}\ntodo: ship`,
      ].join("\n\n"),
    );
  });

  it("an empty remind block has a section, so a later value has a copy to replace", async () => {
    const { configs, environment } = setup(null);
    const context = new ContextBlocks(configs);
    expect(await context.freezeSystemPrompt()).toContain(`${RULE}\nENVIRONMENT [readonly]\n${RULE}\n`);
    expect(await context.reminder()).toBeNull();
    environment.value = "now set";
    expect(await context.reminder()).toContain(`ENVIRONMENT [readonly]\n${RULE}\nnow set`);
  });

  it("a remind block that becomes empty is reminded with an empty section", async () => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    environment.value = null;
    expect(await context.reminder()).toBe(
      `${REMINDER_PREAMBLE}\n\n${RULE}\nENVIRONMENT [readonly]\n${RULE}\n`,
    );
  });

  it.each([
    ["grew at the end", "Today is 2026-03-01. Rain later."],
    ["grew at the start", "Note: Today is 2026-03-01."],
    ["shrank at the end", "Today is 2026-03-01"],
    ["shrank at the start", "oday is 2026-03-01."],
    ["gained a trailing newline", "Today is 2026-03-01.\n"],
    ["gained a leading newline", "\nToday is 2026-03-01."],
    ["gained a trailing blank line", "Today is 2026-03-01.\n\n"],
  ])("content that %s counts as changed", async (_name, value) => {
    const { configs, environment } = setup();
    const context = new ContextBlocks(configs);
    await context.freezeSystemPrompt();
    environment.value = value;
    expect(await context.reminder()).toBe(
      `${REMINDER_PREAMBLE}\n\n${RULE}\nENVIRONMENT [readonly]\n${RULE}\n${value}`,
    );
  });

  it("a writable remind block: the model's own write is reminded until a refresh", async () => {
    const provider = new RecordingProvider("step 1");
    const context = new ContextBlocks([
      { label: "plan", provider, whenChanged: "remind" },
      { label: "tail", provider: new RecordingProvider("after") },
    ]);
    await context.freezeSystemPrompt();
    await context.setBlock("plan", "step 1");
    expect(await context.reminder()).toBeNull();
    await context.appendToBlock("plan", "step 2");
    expect(await context.reminder()).toContain(`PLAN [writable]\n${RULE}\nstep 1\nstep 2`);
  });

  it("usage in the header is part of the rendering: a limit block is reminded when its usage changes", async () => {
    const provider = new ChangingProvider("abc");
    const context = new ContextBlocks(
      [{ label: "status", maxTokens: 10, provider, whenChanged: "remind" }],
      null,
      null,
      { tokenCounter: (text) => text.length },
    );
    await context.freezeSystemPrompt();
    provider.value = "abcd";
    expect(await context.reminder()).toContain("STATUS [40% — 4/10 tokens] [readonly]");
  });

  it("renderReminder is null when every section is in the frozen prompt", async () => {
    const { configs } = setup();
    const context = new ContextBlocks(configs);
    const frozen = await context.freezeSystemPrompt();
    expect(renderReminder(frozen, context.getBlocks())).toBeNull();
    expect(renderReminder("", context.getBlocks())).toContain(REMINDER_PREAMBLE);
  });
});
