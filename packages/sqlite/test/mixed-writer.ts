/**
 * A database our store created on the lean layout (no parent index; paths walked by `parent_seq`), then
 * written by agents@0.22.0's `agents/experimental/memory/session` (`AgentSessionProvider`), which adds its
 * parent index and writes rows without `parent_seq` or tombstones, then read and written by the same store
 * again (a Durable Object that was not restarted). Shared by the Node (better-sqlite3) and workerd tests.
 */
import { ContextError } from "@contextblocks/core";
import { AgentSessionProvider } from "agents-session/experimental/memory/session";
import { expect } from "vitest";
import type { SqliteTree } from "./sqlite-tree.js";

/** What agents@0.22.0's providers take: an object with an Agent's synchronous tagged-template `sql`. */
export type AgentsSqlHost = ConstructorParameters<typeof AgentSessionProvider>[0];

/** A plain message both packages accept (no createdAt: agents@0.22.0 types it as a Date only). */
export const say = (id: string, text: string, role = "user") => ({
  id,
  role,
  parts: [{ type: "text", text }],
});
export const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

const hasParentIndex = (host: AgentsSqlHost) =>
  host.sql`SELECT 1 AS found FROM sqlite_master WHERE type = 'index' AND name = 'idx_assistant_msg_parent'`
    .length > 0;

/**
 * Our branches, then agents' appends (one on an old branch), an update and an overlay; ours (the same
 * store) reads every message, every path as agents reads it, and the updated text in search, then appends.
 * Returns agents' provider and the overlay's id for further checks.
 */
export async function agentsWritesAfterUs(
  ours: SqliteTree,
  host: AgentsSqlHost,
): Promise<{ agents: AgentSessionProvider; overlayId: string }> {
  await ours.appendMessage(say("a", "we deploy on friday"));
  await ours.appendMessage(say("b", "the release train leaves at noon", "assistant"));
  await ours.appendMessage(say("c", "what about monday"));
  await ours.appendMessage(say("b2", "a second answer: the train leaves at one", "assistant"), "a");
  await ours.appendMessage(say("d", "then tuesday"));
  expect(hasParentIndex(host)).toBe(false);
  expect(ids(await ours.searchMessages("tuesday"))).toContain("d");

  const agents = new AgentSessionProvider(host, "chat");
  expect(ids(agents.getHistory())).toEqual(["a", "b2", "d"]);
  expect(ids(agents.getBranches("a"))).toEqual(["b", "b2"]);
  agents.appendMessage(say("e", "agents writes on wednesday", "assistant"));
  agents.appendMessage(say("f", "agents branches off on thursday", "assistant"), "c");
  agents.appendMessage(say("g", "agents continues to saturday"));
  agents.updateMessage(say("c", "what about the lighthouse tour"));
  const overlay = agents.addCompaction("we talked about the release train", "a", "b");
  expect(hasParentIndex(host)).toBe(true);

  expect(ids(await ours.getHistory())).toEqual(ids(agents.getHistory()));
  expect(ids(await ours.getHistory())).toEqual([`compaction_${overlay.id}`, "c", "f", "g"]);
  expect(ids(await ours.getHistory("e"))).toEqual(ids(agents.getHistory("e")));
  expect(ids(await ours.getHistory("e"))).toEqual(["a", "b2", "d", "e"]);
  expect((await ours.getLatestLeaf())?.id).toBe(agents.getLatestLeaf()?.id);
  expect(await ours.getPathLength("g")).toBe(agents.getPathLength("g"));
  expect(ids(await ours.getBranches("c"))).toEqual(["f"]);
  expect(await ours.getMessage("c")).toEqual(say("c", "what about the lighthouse tour"));
  expect((await ours.getTree()).map((node) => node.id).sort()).toEqual(
    ["a", "b", "b2", "c", "d", "e", "f", "g"].sort(),
  );
  // Search finds agents' rows and the updated text, each message once.
  expect(ids(await ours.searchMessages("lighthouse"))[0]).toBe("c");
  expect(ids(await ours.searchMessages("monday"))).not.toContain("c");
  const wednesday = ids(await ours.searchMessages("wednesday"));
  expect(wednesday[0]).toBe("e");
  expect(new Set(wednesday).size).toBe(wednesday.length);

  await ours.appendMessage(say("h", "ours again on sunday"));
  expect(ids(agents.getHistory())).toEqual([`compaction_${overlay.id}`, "c", "f", "g", "h"]);
  expect(ids(await ours.getHistory())).toEqual(ids(agents.getHistory()));
  return { agents, overlayId: overlay.id };
}

/**
 * agents@0.22.0 deletes a message and leaves its child naming it (no tombstone): ours refuses to append a
 * message with that id, which would close a parent loop, with a ContextError naming the id; the path
 * stays readable and another id is stored.
 */
export async function agentsDeletesThenWeReappend(
  ours: SqliteTree,
  host: AgentsSqlHost,
): Promise<AgentSessionProvider> {
  await ours.appendMessage(say("a", "one"));
  await ours.appendMessage(say("b", "two", "assistant"));
  await ours.appendMessage(say("c", "three"));
  const agents = new AgentSessionProvider(host, "chat");
  agents.deleteMessages(["b"]);
  expect(ids(agents.getHistory())).toEqual(["c"]);

  // Appended under the latest leaf "c", a new "b" would close the loop b → c → b.
  const refused = await ours.appendMessage(say("b", "two again", "assistant")).catch((error) => error);
  expect(refused).toBeInstanceOf(ContextError);
  expect((refused as ContextError).code).toBe("INVALID_INPUT");
  // Worded by the message tree, which names no other message.
  expect((refused as ContextError).message).toContain('id "b" is still the parent of stored messages');
  expect(ids(await ours.getHistory())).toEqual(["c"]);
  await ours.appendMessage(say("b-new", "two again", "assistant"));
  expect(ids(await ours.getHistory())).toEqual(["c", "b-new"]);
  expect(ids(agents.getHistory())).toEqual(["c", "b-new"]);
  return agents;
}
