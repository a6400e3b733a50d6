import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { messagesTable } from "@contextblocks/sqlite/store-kit";
import { describe, expect, it } from "vitest";
import { DEFAULT_COMPACT_AFTER_TOKENS, PROTECT_HEAD } from "../../src/conversations.js";
import type { ChatResult } from "../../src/snapshot.js";
import { chat, createSession, edit, inspectorHtml, prompt, snapshot, stub } from "./helpers.js";

describe("conversations as sessions", () => {
  it("stores each turn in the session and keeps the history across a restart", async () => {
    const agent = "session-restart";
    const first = await chat(agent, "Remember that I live in Porto.");
    const second = await chat(agent, "What do you remember about me?");
    expect(second.session.id).toBe(first.session.id);
    expect(second.parentId).toBe(first.assistantMessageId);
    // The first turn called set_context: the user's message, that step, the answer.
    expect(first.storedMessageIds).toHaveLength(3);
    expect(first.storedMessageIds[0]).toBe(first.userMessageId);
    expect(first.storedMessageIds[2]).toBe(first.assistantMessageId);
    expect(second.storedMessageIds).toEqual([second.userMessageId, second.assistantMessageId]);
    expect(second.sentMessageIds).toEqual([...first.storedMessageIds, second.userMessageId]);
    await abortAllDurableObjects();
    const after = await snapshot(agent);
    expect(after.transcript.count).toBe(5);
    expect(after.transcript.recent.map((line) => line.id)).toEqual([
      ...first.storedMessageIds,
      ...second.storedMessageIds,
    ]);
    const third = await chat(agent, "What do you remember about me?");
    expect(third.parentId).toBe(second.assistantMessageId);
    expect(third.reply).toContain("I live in Porto.");
  });

  it("an edit stores the new text beside the old message: a branch the next turns continue", async () => {
    const agent = "session-branch";
    const first = await chat(agent, "Remember that I like tea.");
    const second = await chat(agent, "How do I run the tests?");
    const edited = await edit(agent, second.userMessageId, "Where does the data live?");
    expect(edited.parentId).toBe(first.assistantMessageId);
    expect(edited.sentMessageIds).toEqual([...first.storedMessageIds, edited.userMessageId]);
    const view = (await snapshot(agent)).sessions[0];
    const branchPoint = view?.tree.find((node) => node.id === first.assistantMessageId);
    expect(branchPoint?.children).toBe(2);
    const onPath = view?.tree.filter((node) => node.onPath).map((node) => node.id);
    expect(onPath).toEqual([...first.storedMessageIds, ...edited.storedMessageIds]);
    expect(edited.storedMessageIds).toHaveLength(3); // the question, the search step, the answer
    expect(view?.tree.find((node) => node.id === second.userMessageId)?.onPath).toBe(false);
    expect(view?.storedMessages).toBe(9);
    const next = await chat(agent, "Thanks.");
    expect(next.parentId).toBe(edited.assistantMessageId);
    const html = await inspectorHtml(agent);
    expect(html).toContain('class="branches"');
    expect(html).toContain("Branch 2 of 2 · active");
  });

  it("a new conversation is a second session; turns go to it", async () => {
    const agent = "session-manager";
    const first = await chat(agent, "Remember that I like tea.");
    const created = await createSession(agent, "Second <chat>");
    const turn = await chat(agent, "How do I run the tests?");
    expect(turn.session.id).toBe(created.session.id);
    expect(turn.parentId).toBeNull();
    const back = await chat(agent, "What do you remember about me?", first.session.id);
    expect(back.parentId).toBe(first.assistantMessageId);
    const view = await snapshot(agent);
    expect(view.sessions.map((session) => session.name)).toEqual(["Conversation 1", "Second <chat>"]);
    const html = await inspectorHtml(agent);
    expect(html).toContain("Second &lt;chat&gt;");
    expect(html).not.toContain("Second <chat>");
  });
});

describe("compaction", () => {
  it("summarises the middle past the threshold; the model then gets the head, the summary and the recent turns", async () => {
    const agent = "session-compaction";
    const frozen = await prompt(agent);
    const turns: ChatResult[] = [];
    let compacted: ChatResult | undefined;
    for (let index = 0; index < 40 && compacted === undefined; index++) {
      const turn = await chat(agent, `Remember that fact number ${index} is ${"detail ".repeat(30)}.`);
      turns.push(turn);
      // The prompt stays the same bytes on every turn until the compaction.
      expect(turn.promptSha256).toBe(turns[0]?.promptSha256);
      expect(turn.systemIsFrozenPrompt).toBe(true);
      if (turn.compaction !== null) compacted = turn;
      else expect(turn.historyTokens).toBeLessThanOrEqual(DEFAULT_COMPACT_AFTER_TOKENS);
    }
    expect(compacted, "a compaction within 40 turns").toBeDefined();
    expect(compacted?.compactionError).toBeNull();
    expect(compacted?.compaction?.summary).toContain("## Key Points");
    expect(compacted?.compaction?.summary).toContain("Fact number 1 is");
    expect(compacted?.compaction?.fromMessageId).toBe(turns[1]?.userMessageId);
    // The frozen prompt was refreshed once, at the compaction: the memory writes are in it now.
    const refreshed = await prompt(agent);
    expect(refreshed).not.toBe(frozen);
    expect(refreshed).toContain("Fact number 0 is");

    const next = await chat(agent, "What do you remember about me?");
    const head = turns[0]?.storedMessageIds ?? [];
    expect(head).toHaveLength(PROTECT_HEAD);
    expect(next.sentMessageIds.slice(0, PROTECT_HEAD)).toEqual(head);
    expect(next.sentMessageIds[PROTECT_HEAD]).toMatch(/^compaction_/);
    // After the summary: the newest stored messages, in order, from the one after the summarised range.
    const stored = turns.flatMap((turn) => turn.storedMessageIds);
    const recent = next.sentMessageIds.slice(PROTECT_HEAD + 1);
    const after = stored.indexOf(compacted?.compaction?.toMessageId ?? "") + 1;
    expect(after).toBeGreaterThan(PROTECT_HEAD);
    expect(recent).toEqual([...stored.slice(after), next.userMessageId]);
    expect(recent.length).toBeLessThan(stored.length - PROTECT_HEAD);
    expect(next.historyTokens).toBeLessThan(DEFAULT_COMPACT_AFTER_TOKENS);
    // Stored messages are untouched: the overlay only changes what is read.
    const rows = await runInDurableObject(stub(agent), (_instance, state) =>
      state.storage.sql.exec<{ count: number }>(`SELECT count(*) AS count FROM ${messagesTable}`).one(),
    );
    // Each "remember" turn stored three messages (question, set_context step, answer); the last, two.
    expect(turns.every((turn) => turn.storedMessageIds.length === 3)).toBe(true);
    expect(rows.count).toBe(turns.length * 3 + 2);
    const view = await snapshot(agent);
    expect(view.sessions[0]?.compactions).toHaveLength(1);
    expect(view.sessions[0]?.compactions[0]?.onActivePath).toBe(true);
    const html = await inspectorHtml(agent);
    expect(html).toContain('class="overlay"');
    expect(html).toContain("summarised by");
  });
});
