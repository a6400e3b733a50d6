import type { SessionMessage } from "@contextblocks/sessions";
import { fromBetterSqlite3, type StatementReport } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

describe("SqliteSessionStore search: one statement per shape", () => {
  it("binds each search's query and session into the statement of its shape, and asks when in its own", async () => {
    const reports: StatementReport[] = [];
    const client = fromBetterSqlite3(temporary.database, { onStatement: (report) => reports.push(report) });
    // A ranking no other test uses: these searches build their shapes here.
    const options = (sessionId: string) => ({ sessionId, searchRanking: { contextWeight: 0.4375 } });
    const first = sqliteTree(client, options("first"));
    const second = sqliteTree(client, options("second"));
    await first.appendMessage(message("f1", "We sailed to the harbour yesterday."));
    await first.appendMessage(message("f2", "The lighthouse keeper waved."));
    await second.appendMessage(message("s1", "The harbour was full of boats last week."));
    await second.appendMessage(message("s2", "A lighthouse stood on the hill."));
    /** The ids one search finds, and its last search statement (a session's first search may try two). */
    const search = async (tree: typeof first, query: string) => {
      reports.length = 0;
      const ids = (await tree.searchMessages(query, 5)).map((hit) => hit.id);
      return {
        ids,
        text: reports.filter((report) => report.text.includes("WITH hit AS")).at(-1)?.text,
      };
    };

    const harbour = await search(first, "harbour boats");
    const lighthouse = await search(first, "lighthouse keeper");
    expect([harbour.ids, lighthouse.ids]).toEqual([["f1"], ["f2"]]);
    expect(lighthouse.text).toEqual(harbour.text);
    expect(harbour.text).not.toContain("yesterday");
    // The same shapes in another session: its own id bound, its own messages found.
    const otherHarbour = await search(second, "harbour boats");
    const otherLighthouse = await search(second, "lighthouse keeper");
    expect([otherHarbour.ids, otherLighthouse.ids]).toEqual([["s1"], ["s2"]]);
    expect(otherLighthouse.text).toEqual(otherHarbour.text);

    // A question that asks when weighs the messages that say when: another shape, bound as well.
    const full = await search(second, "When was the harbour full?");
    const sailed = await search(second, "When did we see the lighthouse?");
    expect([full.ids[0], sailed.ids[0]]).toEqual(["s1", "s2"]);
    expect(sailed.text).toEqual(full.text);
    expect(full.text).toContain("yesterday");
    expect((await search(second, "harbour boats")).text).toEqual(otherHarbour.text);
  });

  it("reads an index that is caught up in one statement before the search's own, and catches up after appends", async () => {
    const reports: StatementReport[] = [];
    const client = fromBetterSqlite3(temporary.database, { onStatement: (report) => reports.push(report) });
    const tree = sqliteTree(client, "chat");
    await tree.appendMessage(message("a", "The harbour was quiet."));
    expect((await tree.searchMessages("harbour", 5)).map((hit) => hit.id)).toEqual(["a"]);
    reports.length = 0;
    expect((await tree.searchMessages("quiet harbour", 5)).map((hit) => hit.id)).toEqual(["a"]);
    expect(reports.map((report) => report.text.includes("WITH hit AS"))).toEqual([false, true]);
    // Messages appended since (fewer than an append indexes at once) are indexed by the search first.
    await tree.appendMessage(message("b", "A boat left the harbour."));
    await tree.appendMessage(message("c", "The boat came back."));
    expect((await tree.searchMessages("boat", 5)).map((hit) => hit.id).sort()).toEqual(["b", "c"]);
  });
});
