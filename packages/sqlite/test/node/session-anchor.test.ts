import { SessionBuilder } from "@contextblocks/sessions";
import { agentsHost } from "@contextblocks/test-kit/sqlite";
import {
  AgentSessionProvider as AnchorProvider,
  Session as AnchorSession,
} from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { sqliteTree } from "../sqlite-tree.js";

/** A plain message both packages accept (no createdAt: the anchor types it as a Date only). */
function message(
  id: string,
  text: string,
  role = "user",
): { id: string; role: string; parts: { type: string; text: string }[] } {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

describe("data written by agents/experimental/memory/session (agents@0.22.0)", () => {
  it("is read by ours on the same database: tree, branches, overlays, search, path length", async () => {
    const database = new Database(":memory:");
    const anchor = new AnchorProvider(agentsHost(database), "chat");
    anchor.appendMessage(message("a", "we deploy on friday"));
    anchor.appendMessage(message("b", "the release train leaves at noon", "assistant"));
    anchor.appendMessage(message("c", "what about monday"));
    anchor.appendMessage(message("b2", "a second answer", "assistant"), "a");
    anchor.addCompaction("a summary of a..b", "a", "b");

    // indexOnAppend: agents@0.22.0 searches its FTS table directly, so ours writes search rows eagerly.
    const ours = sqliteTree(database, { sessionId: "chat", indexOnAppend: true });
    expect(ids(await ours.getHistory("c"))).toEqual([`compaction_${anchor.getCompactions()[0]?.id}`, "c"]);
    expect(ids(await ours.getBranches("a"))).toEqual(["b", "b2"]);
    expect((await ours.getLatestLeaf())?.id).toBe("b2");
    expect(await ours.getPathLength("c")).toBe(3);
    expect(ids(await ours.searchMessages("deploy friday"))).toEqual(["a"]);

    // Ours continues the conversation on the anchor's rows; the anchor reads what ours wrote.
    await ours.appendMessage(message("d", "continued by contextblocks"));
    expect(ids(anchor.getHistory("d"))).toEqual(ids(await ours.getHistory("d")));
    expect(ids(anchor.searchMessages("contextblocks"))).toEqual(["d"]);
    database.close();
  });

  it("Session.create on an agents-style host reads a session the anchor's Session wrote", async () => {
    const database = new Database(":memory:");
    const host = agentsHost(database);
    const anchor = AnchorSession.create(host).forSession("s1");
    await anchor.appendMessage(message("m1", "hello"));
    await anchor.appendMessage(message("m2", "hi there", "assistant"));
    const ours = new SessionBuilder(sqliteBackend(host)).forSession("s1").build();
    expect(ids(await ours.getHistory())).toEqual(["m1", "m2"]);
    expect((await ours.search("hello")).map((hit) => hit.id)).toEqual(["m1"]);
    database.close();
  });
});
