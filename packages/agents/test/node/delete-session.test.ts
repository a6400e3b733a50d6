import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { Session, SessionManager } from "../../src/index.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

describe("SessionManager.delete on the agents drop-in", () => {
  it("removes the blocks and frozen prompt kept under agents' keys, and their versions: reopening serves nothing", async () => {
    temporary = openTemporaryDatabase();
    const database = temporary.database;
    const manager = new SessionManager(database).withContext("memory", { maxTokens: 500 }).withCachedPrompt();
    const doomed = await manager.create("Doomed");
    const kept = await manager.create("Kept");
    for (const info of [doomed, kept]) {
      const session = manager.getSession(info.id);
      await session.replaceContextBlock("memory", `${info.name}: the patient's diagnosis`);
      await session.replaceContextBlock("memory", `${info.name}: the patient's second diagnosis`);
      await session.freezeSystemPrompt();
    }
    const labels = () =>
      (database.prepare("SELECT label FROM cf_agents_context_blocks").all() as { label: string }[]).map(
        (row) => row.label,
      );
    expect(labels()).toContain(`memory_${doomed.id}`);

    // A new manager, as after a restart: it knows the session's blocks from its configuration only.
    const restarted = new SessionManager(database)
      .withContext("memory", { maxTokens: 500 })
      .withCachedPrompt();
    await restarted.delete(doomed.id);

    expect(labels().filter((label) => label.endsWith(doomed.id))).toEqual([]);
    // Versions live in the block's own row (history_recent), in batches and in single slots.
    const versions = database
      .prepare(
        `SELECT content FROM contextblocks_block_history
UNION ALL SELECT json_extract(value, '$[1]') FROM cf_agents_context_blocks, json_each(history_recent)
UNION ALL SELECT json_extract(entry.value, '$[1]') FROM contextblocks_block_history_batches AS batch,
  json_each(batch.versions) AS entry`,
      )
      .all() as { content: string }[];
    expect(versions.filter((row) => row.content.startsWith("Doomed"))).toEqual([]);
    const reopened = Session.create(database).forSession(doomed.id).withContext("memory").withCachedPrompt();
    expect(await reopened.freezeSystemPrompt()).not.toContain("Doomed");
    await reopened.context.load();
    expect(reopened.getContextBlock("memory")?.content ?? "").toBe("");
    // The other session keeps everything.
    const survivor = restarted.getSession(kept.id);
    await survivor.context.load();
    expect(survivor.getContextBlock("memory")?.content).toBe("Kept: the patient's second diagnosis");
    expect(versions.filter((row) => row.content.startsWith("Kept")).length).toBeGreaterThan(0);
  });
});
