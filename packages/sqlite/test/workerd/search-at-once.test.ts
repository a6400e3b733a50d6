import { SessionManager } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import type { NewSessionLayout } from "../../src/store-kit.js";
import { inObject } from "./in-object.js";

const say = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text" as const, text }] });

/**
 * The manager's search answered at once on a real Durable Object (`SessionManager.synchronous.search`): the
 * same hits as the async search, the messages appended since the last search indexed in the same call, and
 * no more rows read than the async search reads.
 */
describe.each(["keyed", "lean"] as NewSessionLayout[])(
  "search answered at once on a Durable Object (%s)",
  (layout) => {
    it("gives the async search's hits, reading no more rows", async () => {
      await inObject(`search-at-once-${layout}`, async (state) => {
        const reports: StatementReport[] = [];
        const client = fromDurableObjectStorage(state.storage, {
          onStatement: (report) => reports.push(report),
        });
        const manager = new SessionManager(sqliteBackend(client, { newDatabaseLayout: layout }));
        const chat = await manager.create("harbour");
        const session = manager.getSession(chat.id);
        for (let index = 0; index < 40; index++) {
          await session.appendMessage(
            say(`m${index}`, `ferry ${index % 5} leaves pier ${index % 3} at ${index} o'clock`),
          );
        }
        const searchAtOnce = manager.synchronous?.search;
        if (searchAtOnce === undefined) throw new Error("expected a synchronous search on a Durable Object");
        const first = searchAtOnce("ferry pier", { limit: 10 });
        expect(first).toHaveLength(10);
        const rowsRead = () => reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0);
        reports.length = 0;
        const atOnce = searchAtOnce("ferry 3 pier 1", { limit: 10 });
        const readAtOnce = rowsRead();
        reports.length = 0;
        const awaited = await manager.search("ferry 3 pier 1", { limit: 10 });
        const readAwaited = rowsRead();
        expect(atOnce).toEqual(awaited);
        expect(readAtOnce).toBe(readAwaited);
        // A message appended now is found by the next search, at once.
        await session.appendMessage(say("late", "the late ferry is cancelled"));
        expect(searchAtOnce("late ferry cancelled")[0]?.id).toBe("late");
        // A message larger than a Durable Object row (2 MB) is stored in continuation rows, which the index
        // reads to parse it (its first 256 K characters are indexed): found by a search at once, as awaited.
        await session.appendMessage(say("big", `zephyrwind ${"harbour log line. ".repeat(150_000)}`));
        expect(searchAtOnce("zephyrwind").map((hit) => hit.id)).toEqual(["big"]);
        expect((await manager.search("zephyrwind")).map((hit) => hit.id)).toEqual(["big"]);
      });
    });
  },
);
