import { SessionBuilder, SessionManager, type SessionMessage } from "@contextblocks/sessions";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** Every table's rows, FTS5's own tables (index segments as bytes) included. */
function everything(database: Database.Database): string {
  const tables = (
    database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
  ).map((row) => row.name);
  return tables
    .map((name) =>
      (database.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[])
        .map((row) =>
          Object.values(row)
            .map((value) => (Buffer.isBuffer(value) ? value.toString("latin1") : String(value)))
            .join(" "),
        )
        .join("\n"),
    )
    .join("\n");
}

describe("deleting a session deletes its data", () => {
  it("its text is found in no table, the search index's own tables included", async () => {
    const database = new Database(":memory:");
    const backend = sqliteBackend(database);
    const manager = new SessionManager(
      new SessionBuilder(backend).withContext("memory", { maxTokens: 100 }).withCachedPrompt(),
    );
    const doomed = await manager.create("Doomed");
    const kept = await manager.create("Kept");
    await manager.getSession(kept.id).appendMessage(message("k1", "ordinary words about lunch"));
    await manager.getSession(doomed.id).appendMessage(message("d1", "zanzibarquux is the launch code"));
    await manager
      .getSession(doomed.id)
      .appendMessage(message("d2", "a 3 MB attachment: " + "payloadqwerty ".repeat(10)));
    const session = manager.getSession(doomed.id);
    await session.context.setBlock("memory", "the user likes xylophonequark");
    await session.context.freezeSystemPrompt();
    // "d2" beside it, as its context (its parent "d1"'s words: message-search.ts).
    const hits = await manager.search("zanzibarquux");
    expect(hits.map((hit) => [hit.id, hit.context?.map((turn) => turn.id)])).toEqual([["d1", ["d2"]]]);
    expect(everything(database)).toContain("zanzibarquux");
    await manager.delete(doomed.id);
    const dump = everything(database);
    for (const word of ["zanzibarquux", "payloadqwerty", "xylophonequark"]) expect(dump).not.toContain(word);
    expect((await manager.search("lunch")).map((hit) => hit.id)).toEqual(["k1"]);
    database.close();
  });
});
