import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

// Another writer (an older client, a script, Cloudflare agents' own code) can leave a message whose parts are
// not all objects. The lean layout indexes messages when a search runs, so such a row must not stop every
// later search of the database.
describe("a stored message whose parts are not all objects", () => {
  it("is indexed by its text parts, and searches go on finding it and the others", async () => {
    const database = new Database(":memory:");
    const tree = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "lean" });
    await tree.appendMessage({
      id: "a",
      role: "user",
      parts: [{ type: "text", text: "the deploy is friday" }],
    });
    await tree.appendMessage({ id: "b", role: "assistant", parts: [{ type: "text", text: "noted" }] });
    database.prepare("UPDATE assistant_messages SET content = ? WHERE id = 'b'").run(
      JSON.stringify({
        id: "b",
        role: "assistant",
        parts: [null, 7, "x", { type: "text", text: "deploy noted" }],
      }),
    );
    const hits = await tree.searchMessages("deploy", 10);
    expect(hits.map((hit) => hit.id).sort()).toEqual(["a", "b"]);
    expect((await tree.searchMessages("noted", 10)).map((hit) => hit.id)).toEqual(["b"]);
  });
});
