import { describe, expect, it } from "vitest";
import { HOSTILE_SESSION_IDS } from "../hostile.js";
import { ids, say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

describe("a one-session search on a Durable Object (the session's token in its MATCH)", () => {
  it("finds that session's messages alone, whatever characters the session ids hold, of any length", async () => {
    await inObject("session-key-hostile-ids", async (state) => {
      for (const [index, sessionId] of HOSTILE_SESSION_IDS.entries()) {
        const tree = sqliteTree(state.storage, { sessionId, newDatabaseLayout: "keyed" });
        await tree.appendMessage(say(`m${index}-a`, `the deploy moved to friday, note ${index}`));
        await tree.appendMessage(say(`m${index}-b`, "the deploy friday deploy again", "assistant"));
      }
      for (const [index, sessionId] of HOSTILE_SESSION_IDS.entries()) {
        const hits = await sqliteTree(state.storage, { sessionId }).searchMessages("deploy friday", 10);
        expect(ids(hits).sort()).toEqual([`m${index}-a`, `m${index}-b`]);
      }
    });
  });
});
