// A better-sqlite3 database written by agents@0.32.0's `agents/sessions` (the real package, installed as
// `agents-context`, run in Node with its Lifecycle services given directly), closed, then opened again and read
// by contextblocks: every message (updated, branched, with media), the compaction, then search and appends.
import { importAgentsSessions, readAgentsSessions } from "@contextblocks/agents/experimental/memory/session";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { Sessions } from "agents-context/sessions";
import { afterEach, describe, expect, it } from "vitest";
import { durableObjectStorageHost } from "./durable-object-storage-host.js";

const say = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});

/** agents' `Sessions` capability with the services a Lifecycle would give it. */
class HostedSessions extends Sessions {
  constructor(private readonly services: unknown) {
    super();
  }
  override get lifecycleServices(): never {
    return this.services as never;
  }
}

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

describe("a better-sqlite3 database agents@0.32.0's agents/sessions wrote", () => {
  it("reads messages (updated, branched, with media) and the compaction; search and appends work after", async () => {
    temporary = openTemporaryDatabase();
    const sessions = new HostedSessions({
      storage: durableObjectStorageHost(temporary.database),
      events: { emit: () => undefined },
      ready: async () => undefined,
    });
    await sessions.onStart();
    const theirs = sessions.session("chat");
    await theirs.appendMessage(say("m1", "user", "When does the ferry leave?") as never);
    await theirs.appendMessage(say("m2", "assistant", "At nine, from pier four.") as never);
    await theirs.appendMessage(say("m2b", "assistant", "At ten, from pier two.") as never, {
      parentId: "m1",
    });
    await theirs.appendMessage(say("m3", "user", "And the lighthouse tour?") as never, { parentId: "m2" });
    const photo = new Uint8Array(3000).map((_, index) => index % 251);
    const dataUrl = `data:image/png;base64,${Buffer.from(photo).toString("base64")}`;
    await theirs.appendMessage({
      id: "m4",
      role: "user",
      parts: [{ type: "file", mediaType: "image/png", url: dataUrl }],
    } as never);
    await theirs.updateMessage(say("m2", "assistant", "At nine sharp, from pier four.") as never);
    await theirs.addCompaction("The user asked about the ferry.", "m1", "m2");
    // agents stores a range whose end is not a message of the session and never shows it; the import skips it.
    await theirs.addCompaction("A range agents never shows.", "m3", "gone");
    const expected = (await theirs.getHistory()) as unknown as { id: string }[];

    // A fresh connection on the file agents wrote.
    const database = temporary.reopen();
    const read = await readAgentsSessions(database, { sessionId: "chat" });
    expect(read.messages.map((entry) => [entry.message.id, entry.parentId])).toEqual([
      ["m1", null],
      ["m2", "m1"],
      ["m2b", "m1"],
      ["m3", "m2"],
      ["m4", "m3"],
    ]);
    expect(read.messages[1]?.message.parts[0]).toMatchObject({ text: "At nine sharp, from pier four." });
    const stored = database.prepare("SELECT content FROM cf_agents_session_messages WHERE id = 'm4'").get();
    expect(JSON.stringify(stored)).toContain("attachment:sha256:");
    expect((read.messages[4]?.message.parts[0] as { url?: string } | undefined)?.url).toBe(dataUrl);
    expect(read.compactions.map((c) => [c.fromMessageId, c.toMessageId, c.summary])).toEqual([
      ["m1", "m2", "The user asked about the ferry."],
      ["m3", "gone", "A range agents never shows."],
    ]);

    const imported = new SqliteSessionStore(database, "chat-imported");
    expect(await importAgentsSessions(database, imported, { sessionId: "chat" })).toEqual({
      messages: 5,
      compactions: 1,
      skippedCompactions: 1,
    });
    // The store is read as a `Session` reads it: through the message tree.
    const store = new MessageTree(imported);
    const ours = await store.getHistory("m4");
    expect(ours.map((message) => (message.id.startsWith("compaction_") ? "compaction" : message.id))).toEqual(
      expected.map((message) => (message.id.startsWith("compaction_") ? "compaction" : message.id)),
    );
    expect((await store.getBranches("m1")).map((message) => message.id)).toEqual(["m2", "m2b"]);
    expect((await store.searchMessages?.("lighthouse tour"))?.map((hit) => hit.id)).toContain("m3");
    await store.appendMessage(say("m5", "assistant", "The chandlery opens at eight."));
    // The new turn is the hit; m3, found through the turn after it, is shown beside it as its context.
    const hits = (await store.searchMessages?.("chandlery")) ?? [];
    expect(hits.map((hit) => [hit.id, hit.context?.map((turn) => turn.id)])).toEqual([["m5", ["m3"]]]);
  });
});
