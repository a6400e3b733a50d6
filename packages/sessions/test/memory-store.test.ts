import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import type { SessionMessage } from "../src/index.js";
import { InMemorySessions } from "../src/memory/index.js";
import { MemoryTree } from "./memory-tree.js";

function message(id: string, text = `text of ${id}`, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

describe("MemoryTree", () => {
  it("returns a message's parent and the tree in storage order", async () => {
    const store = new MemoryTree({ sessionId: "chat" });
    for (const id of ["q", "a1"]) await store.appendMessage(message(id));
    await store.appendMessage(message("a2", "other", "assistant"), "q");
    expect(await store.getNode("a2")).toMatchObject({ id: "a2", parentId: "q", role: "assistant" });
    expect(await store.getNode("q")).toMatchObject({ parentId: null });
    expect(await store.getNode("missing")).toBeNull();
    expect((await store.getTree()).map((node) => [node.id, node.parentId])).toEqual([
      ["q", null],
      ["a1", "q"],
      ["a2", "q"],
    ]);
    expect(await store.getTree({ limit: 1 })).toHaveLength(1);
  });

  it("refuses an id stored in another session, and reads copies", async () => {
    const sessions = new InMemorySessions();
    const one = new MemoryTree({ sessionId: "one", sessions });
    const two = new MemoryTree({ sessionId: "two", sessions });
    await one.appendMessage(message("x"));
    const error = await two.appendMessage(message("x")).catch((caught: unknown) => caught);
    expect(isContextError(error) && error.message).toMatch(/another session/);
    const read = (await one.getMessage("x")) as SessionMessage;
    (read.parts[0] as { text: string }).text = "changed";
    expect((await one.getMessage("x"))?.parts[0]?.text).toBe("text of x");
    expect(await two.getNode("x")).toBeNull();
  });

  it("reads a byte-budgeted window of the newest messages", async () => {
    const store = new MemoryTree();
    for (let index = 0; index < 20; index++) await store.appendMessage(message(`m${index}`, "x".repeat(100)));
    const size = new TextEncoder().encode(JSON.stringify(message("m10", "x".repeat(100)))).length;
    const window = await store.getRecentHistory(null, size * 5, 1);
    expect(window.messages.map((entry) => entry.id)).toEqual(["m15", "m16", "m17", "m18", "m19"]);
    expect(window.truncated).toBe(true);
    expect((await store.getRecentHistory(null, 0, 3)).messages).toHaveLength(3);
  });
});
