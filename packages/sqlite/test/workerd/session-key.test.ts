import { describe, expect, it } from "vitest";
import { ids, say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

/** Ids of sessions a search must keep apart: long, quoted, spaced, emoji, control characters, the default. */
const hostileSessionIds = [
  "",
  "x".repeat(10_000),
  // 40,000 bytes of UTF-8: its token is cut at FTS5's 32 KB, as is the next one's, which differs only after it.
  "🦊".repeat(10_000),
  `${"🦊".repeat(9_999)}🐻`,
  `it's "quoted" 'twice'`,
  "with  spaces\tand\ttabs ",
  "control\u0001\u0002\u001f\u007fcharacters",
];

describe("a one-session search on a Durable Object (the session's token in its MATCH)", () => {
  it("finds that session's messages alone, whatever characters the session ids hold, of any length", async () => {
    await inObject("session-key-hostile-ids", async (state) => {
      for (const [index, sessionId] of hostileSessionIds.entries()) {
        const tree = sqliteTree(state.storage, { sessionId, newDatabaseLayout: "keyed" });
        await tree.appendMessage(say(`m${index}-a`, `the deploy moved to friday, note ${index}`));
        await tree.appendMessage(say(`m${index}-b`, "the deploy friday deploy again", "assistant"));
      }
      for (const [index, sessionId] of hostileSessionIds.entries()) {
        const hits = await sqliteTree(state.storage, { sessionId }).searchMessages("deploy friday", 10);
        expect(ids(hits).sort()).toEqual([`m${index}-a`, `m${index}-b`]);
      }
    });
  });
});
