import { SessionBuilder, SessionManager, type SessionMessage } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

describe("sessions on Durable Object storage", () => {
  it("stores a tree, branches, overlays and search in ctx.storage, and reads them after a new Session", async () => {
    await inObject("tree", async (state) => {
      const session = new SessionBuilder(sqliteBackend(state))
        .forSession("chat")
        .withContext("memory", { maxTokens: 100 })
        .withCachedPrompt()
        .build();
      await session.appendMessage(message("q", "when do we deploy"));
      await session.appendMessage(message("a1", "on Friday", "assistant"));
      await session.appendMessage(message("a2", "on Monday", "assistant"), "q");
      await session.addCompaction("the question", "q", "q");
      await session.context.setBlock("memory", "User deploys weekly.");
      const prompt = await session.context.freezeSystemPrompt();
      const again = new SessionBuilder(sqliteBackend(state.storage))
        .forSession("chat")
        .withContext("memory", { maxTokens: 100 })
        .withCachedPrompt()
        .build();
      expect(ids(await again.store.getBranches("q"))).toEqual(["a1", "a2"]);
      const history = await again.getHistory();
      expect(history.map((entry) => entry.parts[0]?.text)).toEqual(["the question", "on Monday"]);
      expect(await again.store.getPathLength("a1")).toBe(2);
      // "q" has its own "deploy" and its answer's "Friday" (lent at query time), "a1" its own "Friday" and
      // its parent's "deploy" (the context column): both hits, and "a2", which has only its parent's words,
      // shown beside "q" as its context.
      const hits = await again.search("Friday deploy");
      expect(hits.map((hit) => hit.id).sort()).toEqual(["a1", "q"]);
      expect(hits.find((hit) => hit.id === "q")?.context?.map((turn) => turn.id)).toContain("a2");
      expect(await again.context.freezeSystemPrompt()).toBe(prompt);
    });
  });

  it("refuses a duplicate id and a missing parent without storing anything", async () => {
    await inObject("refusals", async (state) => {
      const provider = sqliteTree(state.storage, "chat");
      await provider.appendMessage(message("a", "x"));
      await expect(provider.appendMessage(message("a", "y"))).rejects.toThrow(/already exists/);
      await expect(provider.appendMessage(message("b", "y"), "ghost")).rejects.toThrow(/parent "ghost"/);
      expect(ids(await provider.getHistory())).toEqual(["a"]);
    });
  });

  it("an append reads and writes the same rows at 10 and at 300 messages", async () => {
    await inObject("row-cost", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const provider = sqliteTree(client, "chat");
      const costAt = async (index: number) => {
        reports.length = 0;
        await provider.appendMessage(message(`m${index}`, `message number ${index}`));
        return {
          read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
          written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
        };
      };
      for (let index = 0; index < 10; index++) await costAt(index);
      const early = await costAt(10);
      for (let index = 11; index < 300; index++) await costAt(index);
      const late = await costAt(300);
      expect(late.read).toBe(early.read);
      expect(late.written).toBe(early.written);
      reports.length = 0;
      await provider.getHistory();
      const historyRows = reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
      // A path read reads the path by rowid ranges: about one row per message, not more.
      expect(historyRows).toBeLessThan(301 + 10);
    });
  });

  it("compacts automatically and the manager keeps sessions apart", async () => {
    await inObject("manager", async (state) => {
      const manager = new SessionManager(
        new SessionBuilder(sqliteBackend(state.storage))
          .onCompaction(
            createCompactFunction({ summarize: async () => "SUMMARY", protectHead: 1, tailTokenBudget: 50 }),
          )
          .compactAfter(200),
      );
      const one = await manager.create("One");
      const two = await manager.create("Two");
      for (let index = 0; index < 12; index++) {
        await manager
          .getSession(one.id)
          .appendMessage(message(`one-${index}`, `turn ${index} ${"words ".repeat(30)}`));
      }
      await manager.getSession(two.id).appendMessage(message("two-0", "hello"));
      expect(
        (await manager.getSession(one.id).getHistory()).some((entry) => entry.parts[0]?.text === "SUMMARY"),
      ).toBe(true);
      expect(ids(await manager.getSession(two.id).getHistory())).toEqual(["two-0"]);
      expect(await manager.getSession(one.id).store.getPathLength()).toBe(12);
    });
  });
});
