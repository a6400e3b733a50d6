import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { REMINDER_PREAMBLE } from "@contextblocks/core";
import { messagesTable } from "@contextblocks/sqlite/store-kit";
import { SCRIPTED_MODEL_ID, SCRIPTED_REPLY_PREFIX } from "scripted-model";
import { describe, expect, it } from "vitest";
import { createAgentContext, PROFILE_OBJECT } from "../../src/agent-context.js";
import { sha256Hex } from "../../src/hash.js";
import { chooseModel } from "../../src/model.js";
import { AgentSettings } from "../../src/settings.js";
import { SharedBlockProvider } from "../../src/shared-block.js";
import { call, chat, dayAfter, prompt, refresh, setDate, snapshot, stub } from "./helpers.js";

describe("a chat turn", () => {
  it("writes memory through set_context and leaves the frozen prompt byte-identical", async () => {
    const agent = "turn-writes-memory";
    const before = await prompt(agent);
    expect(before).toContain("MEMORY (Facts learned about the user) [0% — 0/600 tokens] [writable]");

    const result = await chat(agent, "Remember that my favourite editor is Helix.");
    expect(result.model).toBe(SCRIPTED_MODEL_ID);
    expect(result.offline).toBe(true);
    expect(result.note).toMatch(/offline scripted model/i);
    expect(result.reply.startsWith(SCRIPTED_REPLY_PREFIX)).toBe(true);
    expect(result.toolCalls).toEqual([
      {
        tool: "set_context",
        input: { label: "memory", content: "- My favourite editor is Helix.", action: "append" },
        output: expect.stringMatching(/^Written to memory\. Usage: \d+% \(\d+\/600 tokens\)$/),
        isError: false,
      },
    ]);
    expect(result.systemIsFrozenPrompt).toBe(true);

    // Stored at once ...
    const memory = (await snapshot(agent)).blocks.find((block) => block.label === "memory");
    expect(memory?.content).toBe("- My favourite editor is Helix.");
    expect(memory?.matchesFrozenPrompt).toBe(false);
    // ... while the prompt stays the same bytes.
    const after = await prompt(agent);
    expect(after).toBe(before);
    expect(after).not.toContain("Helix");
    expect(result.promptSha256).toBe(await sha256Hex(before));

    // The next turn still sends the same system prompt; the write travels in the transcript.
    const next = await chat(agent, "What do you remember about me?");
    expect(next.systemIsFrozenPrompt).toBe(true);
    expect(next.promptSha256).toBe(result.promptSha256);
    expect(next.toolCalls).toEqual([]);
    expect(next.reply).toContain("My favourite editor is Helix.");
    expect(next.transcriptLength).toBe(result.transcriptLength + 2);
  });

  it("searches the seeded knowledge block and answers from the match", async () => {
    const result = await chat("turn-searches", "How do I run the tests?");
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({
      tool: "search_context",
      input: { label: "knowledge", query: "How do I run the tests?" },
    });
    expect(String(result.toolCalls[0]?.output)).toContain("[running-the-tests]");
    expect(result.reply).toContain("pnpm test");
  });

  it("keeps the transcript in the Durable Object, so turns continue", async () => {
    const agent = "turn-transcript";
    await chat(agent, "Remember that I live in Lisbon.");
    const rows = await runInDurableObject(stub(agent), (_instance, state) =>
      state.storage.sql
        // A new database gets @contextblocks/sqlite's keyed layout: messages in `seq` order (it has no rowid).
        .exec<{ content: string }>(`SELECT content FROM ${messagesTable} ORDER BY seq`)
        .toArray()
        .map((row) => JSON.parse(row.content) as { role: string; parts: { type: string }[] }),
    );
    // One stored message per model call: the user's, the step that called set_context (its result in
    // the tool part), the answer.
    expect(rows.map((message) => message.role)).toEqual(["user", "assistant", "assistant"]);
    expect(rows[0]?.parts).toEqual([{ type: "text", text: "Remember that I live in Lisbon." }]);
    expect(rows[1]?.parts).toEqual([
      {
        type: "tool-set_context",
        toolCallId: expect.any(String),
        state: "output-available",
        input: { label: "memory", content: "- I live in Lisbon.", action: "append" },
        output: expect.stringMatching(/^Written to memory\. Usage: \d+% \(\d+\/600 tokens\)$/),
      },
    ]);
    expect(rows[2]?.parts.map((part) => part.type)).toEqual(["text"]);
  });
});

describe("a fresh Durable Object instance on the same storage", () => {
  it("returns the identical prompt, without re-rendering the blocks that changed", async () => {
    const agent = "cold-start";
    const frozen = await prompt(agent);
    await chat(agent, "Remember that I prefer short answers.");
    await runInDurableObject(stub(agent), (instance) => {
      (instance as unknown as { marker?: string }).marker = "old instance";
    });

    await abortAllDurableObjects();

    const marker = await runInDurableObject(
      stub(agent),
      (instance) => (instance as unknown as { marker?: string }).marker,
    );
    expect(marker).toBeUndefined(); // a new instance ...
    expect(await prompt(agent)).toBe(frozen); // ... serving the stored prompt byte for byte
    // The write is in storage, not in the prompt.
    const memory = (await snapshot(agent)).blocks.find((block) => block.label === "memory");
    expect(memory?.content).toBe("- I prefer short answers.");
  });

  it("gives the same prompt to a new ContextBlocks built on that storage", async () => {
    const agent = "new-context-same-storage";
    const frozen = await prompt(agent);
    await chat(agent, "Remember that I use Neovim.");
    const rebuilt = await runInDurableObject(stub(agent), (_instance, state) =>
      createAgentContext(
        state.storage,
        env.SKILLS_BUCKET,
        new AgentSettings(state.storage),
        undefined,
        undefined,
        new SharedBlockProvider(env.SHARED_BLOCK.getByName(PROFILE_OBJECT)),
      ).freezeSystemPrompt(),
    );
    expect(rebuilt).toBe(frozen);
  });
});

describe("refresh", () => {
  it("promotes the write into the prompt, stores it, and survives a cold start", async () => {
    const agent = "refresh-promotes";
    const before = await prompt(agent);
    await chat(agent, "Remember that I deploy on Fridays.");

    const refreshed = await refresh(agent);
    expect(refreshed.changed).toBe(true);
    expect(refreshed.previousSha256).toBe(await sha256Hex(before));
    expect(refreshed.promptSha256).toBe(await sha256Hex(refreshed.prompt));
    expect(refreshed.prompt).toContain("MEMORY (Facts learned about the user) [");
    expect(refreshed.prompt).toContain("- I deploy on Fridays.");
    expect(await prompt(agent)).toBe(refreshed.prompt);

    const memory = (await snapshot(agent)).blocks.find((block) => block.label === "memory");
    expect(memory?.matchesFrozenPrompt).toBe(true);

    await abortAllDurableObjects();
    expect(await prompt(agent)).toBe(refreshed.prompt);
  });

  it("changes nothing when nothing changed", async () => {
    const agent = "refresh-noop";
    const before = await prompt(agent);
    const refreshed = await refresh(agent);
    expect(refreshed.changed).toBe(false);
    expect(refreshed.prompt).toBe(before);
  });
});

describe("a changed date", () => {
  it("reaches the model as a reminder on the user's message, not in the prompt or the transcript", async () => {
    const agent = "date-reminder";
    const frozen = await prompt(agent);
    const today = (await snapshot(agent)).date.today;
    expect(frozen).toContain(`Today is ${today}.`);
    expect((await snapshot(agent)).reminder).toBeNull();

    const tomorrow = dayAfter(today);
    await setDate(agent, tomorrow);
    const pending = (await snapshot(agent)).reminder;
    expect(pending).not.toBeNull();
    expect(pending?.startsWith(REMINDER_PREAMBLE)).toBe(true);
    expect(pending).toContain(`Today is ${tomorrow}.`);
    expect(await prompt(agent)).toBe(frozen);

    const result = await chat(agent, "What is the date today?");
    expect(result.reminder).toBe(pending);
    expect(result.systemIsFrozenPrompt).toBe(true);
    expect(result.reply).toContain(`Today is ${tomorrow}.`);
    expect(result.reply).toContain("reminder");

    const stored = await runInDurableObject(stub(agent), (_instance, state) =>
      state.storage.sql.exec<{ content: string }>(`SELECT content FROM ${messagesTable}`).toArray(),
    );
    expect(stored.length).toBe(2); // the question and the answer (no tool call)
    expect(stored.some((row) => row.content.includes(REMINDER_PREAMBLE))).toBe(false);

    // The reminder is computed against the stored prompt, so it survives a restart ...
    await abortAllDurableObjects();
    expect((await snapshot(agent)).reminder).toBe(pending);
    // ... and a refresh promotes the new date and ends it.
    const refreshed = await refresh(agent);
    expect(refreshed.prompt).toContain(`Today is ${tomorrow}.`);
    expect(refreshed.reminder).toBeNull();
  });
});

describe("the inspector page", () => {
  it("is @contextblocks/inspector's: /agents/:id redirects there, and stored content is escaped", async () => {
    const agent = "inspector-escapes";
    await chat(agent, "Remember that <script>alert('x')</script> & <b>bold</b> are just text.");
    const moved = await call(`/agents/${agent}`, { redirect: "manual" });
    expect(moved.status).toBe(308);
    expect(moved.headers.get("location")).toBe(`/agents/${agent}/inspector/`);
    // Without the token the redirect leads nowhere private.
    expect((await call(`/agents/${agent}/inspector/`)).status).toBe(401);
    const response = await call(`/agents/${agent}/inspector/`, {
      headers: { authorization: "Bearer test-inspector-token" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await response.text();
    for (const label of ["SOUL", "MEMORY", "KNOWLEDGE", "ENVIRONMENT"])
      expect(html).toContain(`>${label}</h3>`);
    for (const marker of ["[readonly]", "[writable]", "[searchable]"]) expect(html).toContain(marker);
    expect(html).toContain('role="meter"');
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<b>bold</b>");
    expect(html).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");
  });

  it("serves the prompt as text/plain", async () => {
    const response = await call("/agents/plain-prompt/prompt");
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await response.text()).toMatch(/^═{46}\nSOUL \[readonly\]\n═{46}\n/);
  });
});

describe("the model choice", () => {
  it("is OpenAI when a key is set, unless AGENT_MODEL=scripted; offline otherwise", () => {
    expect(
      chooseModel({ AGENT_MODEL: "auto", OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "gpt-test" }),
    ).toMatchObject({
      name: "openai:gpt-test",
      offline: false,
    });
    expect(chooseModel({ OPENAI_API_KEY: "sk-test" }).name).toBe("openai:gpt-4.1-mini");
    expect(chooseModel({ AGENT_MODEL: "scripted", OPENAI_API_KEY: "sk-test" })).toMatchObject({
      name: SCRIPTED_MODEL_ID,
      offline: true,
    });
    expect(chooseModel({ AGENT_MODEL: "auto", OPENAI_API_KEY: "  " }).offline).toBe(true);
  });
});
