import { env, runInDurableObject } from "cloudflare:test";
import { importAgentsSessions, readAgentsSessions } from "@contextblocks/agents/experimental/memory/session";
import { MessageTree } from "@contextblocks/sessions/store-kit";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import { describe, expect, it } from "vitest";

const say = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});
// An overlay's message id carries its compaction's id, which the import assigns anew.
const shape = (messages: readonly { id: string; role: string; parts: unknown }[]) =>
  messages.map(({ id, role, parts }) => ({
    id: id.startsWith("compaction_") ? "compaction_…" : id,
    role,
    parts,
  }));

describe("a Durable Object database agents@0.32.0's agents/sessions wrote", () => {
  it("imports messages (updated, branched, with media), compactions; search and appends work after", async () => {
    await runInDurableObject(env.SESSIONS_OBJECT.getByName("import"), async (instance, state) => {
      // Written by the real agents@0.32.0 `Sessions` capability on a real Lifecycle.
      await instance.lifecycle.start();
      const theirs = instance.sessions.session("chat");
      await theirs.appendMessage(say("m1", "user", "When does the ferry leave?"));
      await theirs.appendMessage(say("m2", "assistant", "At nine, from pier four."));
      await theirs.appendMessage(say("m2b", "assistant", "At ten, from pier two."), { parentId: "m1" });
      await theirs.appendMessage(say("m3", "user", "And the lighthouse tour?"), { parentId: "m2" });
      const photo = new Uint8Array(3000).map((_, index) => index % 251);
      const dataUrl = `data:image/png;base64,${btoa(String.fromCharCode(...photo))}`;
      await theirs.appendMessage({
        id: "m4",
        role: "user",
        parts: [{ type: "file", mediaType: "image/png", url: dataUrl }],
      } as never);
      await theirs.updateMessage(say("m2", "assistant", "At nine sharp, from pier four."));
      await theirs.addCompaction("The user asked about the ferry.", "m1", "m2");

      const read = await readAgentsSessions(state.storage, { sessionId: "chat" });
      expect(read.messages.map((entry) => [entry.message.id, entry.parentId])).toEqual([
        ["m1", null],
        ["m2", "m1"],
        ["m2b", "m1"],
        ["m3", "m2"],
        ["m4", "m3"],
      ]);
      // agents offloaded the image to its attachment tables; it comes back as the same data URL.
      expect(
        JSON.stringify([
          ...state.storage.sql.exec("SELECT content FROM cf_agents_session_messages WHERE id = 'm4'"),
        ]),
      ).toContain("attachment:sha256:");
      expect((read.messages[4]?.message.parts[0] as { url?: string } | undefined)?.url).toBe(dataUrl);

      const imported = new SqliteSessionStore(state.storage, "chat-imported");
      expect(await importAgentsSessions(state.storage, imported, { sessionId: "chat" })).toEqual({
        messages: 5,
        compactions: 1,
        skippedCompactions: 0,
      });
      // The store is read as a `Session` reads it: through the message tree.
      const store = new MessageTree(imported);
      expect(shape(await store.getHistory("m4"))).toEqual(
        shape((await theirs.getHistory()) as never).map((message) =>
          message.id === "m4"
            ? { ...message, parts: [{ type: "file", mediaType: "image/png", url: dataUrl }] }
            : message,
        ),
      );
      expect((await store.getBranches("m1")).map((message) => message.id)).toEqual(["m2", "m2b"]);
      expect((await store.getCompactions()).map((c) => [c.fromMessageId, c.toMessageId, c.summary])).toEqual([
        ["m1", "m2", "The user asked about the ferry."],
      ]);
      expect((await store.searchMessages?.("lighthouse tour"))?.map((hit) => hit.id)).toContain("m3");
      await store.appendMessage(say("m5", "assistant", "The chandlery opens at eight."));
      // The new turn is the hit; m3, found through the turn after it, is shown beside it as its context.
      const hits = (await store.searchMessages?.("chandlery")) ?? [];
      expect(hits.map((hit) => [hit.id, hit.context?.map((turn) => turn.id)])).toEqual([["m5", ["m3"]]]);
    });
  });
});
