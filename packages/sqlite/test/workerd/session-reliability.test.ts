import { ContextError } from "@contextblocks/core";
import { SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { type SqliteTree, sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** Text of `bytes` UTF-8 bytes with multi-byte characters and surrogate pairs throughout. */
function bigText(bytes: number, seed: string): string {
  const unit = `${seed} tool output line: ä ø 漢字 😀 \n`;
  const unitBytes = new TextEncoder().encode(unit).length;
  return unit.repeat(Math.ceil(bytes / unitBytes));
}

describe("messages over the 2 MB Durable Object row limit", () => {
  it("stores a 3 MB tool output and a 2.5 MB image part whole and reads them back byte-identical", async () => {
    await inObject("big-messages", async (state) => {
      const store = sqliteTree(state.storage, "chat");
      const output = bigText(3 * 1024 * 1024, "readFile");
      const image = "iVBORw0KGgo".repeat(Math.ceil((2.5 * 1024 * 1024) / 11));
      const toolMessage: SessionMessage = {
        id: "tool",
        role: "assistant",
        parts: [
          { type: "text", text: "reading the file" },
          { type: "tool-readFile", toolCallId: "c1", state: "output-available", input: {}, output },
        ],
      };
      const imageMessage: SessionMessage = {
        id: "shot",
        role: "user",
        parts: [
          {
            type: "file",
            mediaType: "image/png",
            url: `data:image/png;base64,${image}`,
          } as SessionMessage["parts"][number],
          { type: "text", text: "what does this screenshot show" },
        ],
      };
      await store.appendMessage(message("q", "read the log"));
      await store.appendMessage(toolMessage);
      await store.appendMessage(imageMessage);
      await store.appendMessage(message("a", "a login page", "assistant"));

      const history = await store.getHistory();
      expect(ids(history)).toEqual(["q", "tool", "shot", "a"]);
      expect(JSON.stringify(history[1])).toBe(JSON.stringify(toolMessage));
      expect(JSON.stringify(history[2])).toBe(JSON.stringify(imageMessage));
      expect(JSON.stringify(await store.getMessage("tool"))).toBe(JSON.stringify(toolMessage));
      expect(JSON.stringify((await store.getBranches("tool"))[0])).toBe(JSON.stringify(imageMessage));
      expect(JSON.stringify((await store.getLatestLeaf())?.id)).toBe('"a"');
      const recent = await store.getRecentHistory(null, 1024, 3);
      expect(ids(recent.messages)).toEqual(["tool", "shot", "a"]);
      expect(recent.totalContentBytes).toBeGreaterThan(5 * 1024 * 1024);
      // The answer "a" ranks through the turn before it (message-search.ts) near the one text match: a hit
      // marked so. "tool" and "q" only through their context: shown beside the hit, never hits of their own.
      const screenshot = await store.searchMessages("screenshot");
      expect(screenshot.map((hit) => [hit.id, hit.matchedBy])).toEqual([
        ["shot", "text"],
        ["a", "neighbours"],
      ]);
      expect(
        screenshot
          .flatMap((hit) => hit.context ?? [])
          .map((turn) => turn.id)
          .sort(),
      ).toEqual(["q", "tool"]);

      // A new store on the same object reads them too; an update shrinks one back to one row.
      const again = sqliteTree(state.storage, "chat");
      expect(JSON.stringify(await again.getMessage("shot"))).toBe(JSON.stringify(imageMessage));
      await again.updateMessage(message("tool", "file was empty", "assistant"));
      expect((await again.getMessage("tool"))?.parts).toEqual([{ type: "text", text: "file was empty" }]);
      await again.updateMessage(toolMessage);
      expect(JSON.stringify(await again.getMessage("tool"))).toBe(JSON.stringify(toolMessage));
      await again.deleteMessages(["tool"]);
      expect(await again.getMessage("tool")).toBeNull();
      const left = state.storage.sql.exec("SELECT COUNT(*) AS n FROM assistant_message_chunks").one();
      expect(left.n).toBe(1); // the image's one continuation row
    });
  }, 120_000);

  it("refuses a message past the documented cap with a ContextError, storing nothing", async () => {
    await inObject("too-big", async (state) => {
      const store = sqliteTree(state.storage, "chat");
      const huge = message("huge", "x".repeat(33 * 1024 * 1024));
      const error = await store.appendMessage(huge).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ContextError);
      expect((error as ContextError).code).toBe("INVALID_INPUT");
      expect(String((error as Error).message)).toMatch(/up to 33554432 bytes/);
      expect(await store.getHistory()).toEqual([]);
    });
  }, 120_000);

  it("a Session with compaction and search works on a session holding big messages", async () => {
    await inObject("big-session", async (state) => {
      const session = new SessionBuilder(sqliteBackend(state)).forSession("s").build();
      await session.appendMessage(message("a", bigText(2_200_000, "first")));
      await session.appendMessage(message("b", "short answer about the first file", "assistant"));
      expect(ids(await session.getHistory())).toEqual(["a", "b"]);
      expect(ids(await session.search("first file"))).toContain("b");
      await session.store.deleteMessages(["a", "b"]);
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM assistant_message_chunks").one().n).toBe(0);
    });
  }, 120_000);
});

describe("two writers, one session", () => {
  it("two stores on one object appending at once never fork the path or drop a message", async () => {
    await inObject("two-writers", async (state) => {
      const first = sqliteTree(state.storage, "chat");
      const second = sqliteTree(state.storage, "chat");
      const write = async (store: SqliteTree, prefix: string) => {
        for (let index = 0; index < 10; index++)
          await store.appendMessage(message(`${prefix}${index}`, "hi"));
      };
      await Promise.all([write(first, "a"), write(second, "b")]);
      const history = await first.getHistory();
      expect(history).toHaveLength(20);
      expect(await second.getPathLength()).toBe(20);
      const tree = await first.getTree();
      const children = new Map<string | null, number>();
      for (const node of tree) children.set(node.parentId, (children.get(node.parentId) ?? 0) + 1);
      expect(Math.max(...children.values())).toBe(1);
    });
  });

  it("one new Session per request, requests overlapping, keeps every message on the path", async () => {
    await inObject("session-per-request", async (state) => {
      const request = (index: number) =>
        new SessionBuilder(sqliteBackend(state.storage))
          .forSession("chat")
          .build()
          .appendMessage(message(`r${index}`, `request ${index}`));
      await Promise.all(Array.from({ length: 12 }, (_, index) => request(index)));
      const history = await new SessionBuilder(sqliteBackend(state.storage))
        .forSession("chat")
        .build()
        .getHistory();
      expect(ids(history).sort()).toEqual(Array.from({ length: 12 }, (_, index) => `r${index}`).sort());
    });
  });
});

describe("delete, then re-append an id", () => {
  it("never makes a parent cycle", async () => {
    await inObject("cycle", async (state) => {
      const store = sqliteTree(state.storage, "chat");
      await store.appendMessage(message("a", "one"));
      await store.appendMessage(message("b", "two"));
      await store.appendMessage(message("c", "three"));
      await store.deleteMessages(["b"]);
      const error = await store.appendMessage(message("b", "two again")).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ContextError);
      // Worded by the message tree, which names no other message.
      expect(String((error as Error).message)).toMatch(/"b" is still the parent of stored messages/);
      // No row points back into its own chain: every walk up ends at a root or a missing parent.
      const tree = await store.getTree();
      const parents = new Map(tree.map((node) => [node.id, node.parentId]));
      for (const node of tree) {
        const seen = new Set<string>();
        let at: string | null | undefined = node.id;
        while (at !== null && at !== undefined && parents.has(at)) {
          expect(seen.has(at)).toBe(false);
          seen.add(at);
          at = parents.get(at);
        }
      }
      expect(await store.getPathLength()).toBeLessThanOrEqual(2);
    });
  });
});

describe("row costs on a Durable Object", () => {
  it("an append with search on writes no search row; the first search indexes what is new", async () => {
    await inObject("lazy-index", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      // The lazy indexer of the lean layout (the keyed one writes each search row on append).
      const store = sqliteTree(client, { sessionId: "chat", newDatabaseLayout: "lean" });
      await store.appendMessage(message("m0", "warm up the schema"));
      reports.length = 0;
      await store.appendMessage(message("m1", "the deploy moved to friday"));
      const written = reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0);
      // The message row and its primary-key entry (the lean layout of a new database); no search row.
      expect(written).toBe(2);
      expect(reports.some((report) => /assistant_fts/.test(report.text))).toBe(false);
      // "m0" through its context ("m1" is the turn after it), shown beside "m1".
      const shown = async () =>
        (await store.searchMessages("deploy friday")).flatMap((hit) => [
          hit.id,
          ...(hit.context ?? []).map((turn) => turn.id),
        ]);
      expect(await shown()).toEqual(["m1", "m0"]);
      reports.length = 0;
      expect(await shown()).toEqual(["m1", "m0"]);
      expect(reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0)).toBe(0);
      // A deleted newest message never lets a later one slip under the index's mark.
      await store.deleteMessages(["m1"]);
      await store.appendMessage(message("m2", "the deploy is on monday now"));
      expect(ids(await store.searchMessages("deploy monday"))[0]).toBe("m2");
    });
  });
});

describe("deleting a session deletes its data", () => {
  it("its text is found in no table of the object, the search index's own tables included", async () => {
    await inObject("delete-session", async (state) => {
      const { SessionBuilder, SessionManager } = await import("@contextblocks/sessions");
      const backend = sqliteBackend(state);
      const manager = new SessionManager(
        new SessionBuilder(backend).withContext("memory", { maxTokens: 100 }).withCachedPrompt(),
      );
      const doomed = await manager.create("Doomed");
      const kept = await manager.create("Kept");
      await manager.getSession(kept.id).appendMessage(message("k1", "ordinary words about lunch"));
      await manager.getSession(doomed.id).appendMessage(message("d1", "zanzibarquux is the launch code"));
      await manager.getSession(doomed.id).appendMessage(message("d2", bigText(2_500_000, "payloadqwerty")));
      const session = manager.getSession(doomed.id);
      await session.context.setBlock("memory", "the user likes xylophonequark");
      await session.context.freezeSystemPrompt();
      // "d2" through its context (its parent "d1"'s words: message-search.ts), shown beside "d1".
      const hits = await manager.search("zanzibarquux");
      expect(hits.map((hit) => [hit.id, hit.context?.map((turn) => turn.id)])).toEqual([["d1", ["d2"]]]);
      await manager.delete(doomed.id);
      const tables = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'",
        )
        .toArray()
        .map((row) => row.name);
      const decoder = new TextDecoder("latin1");
      const dump = tables
        .map((name) =>
          state.storage.sql
            .exec(`SELECT * FROM "${name}"`)
            .toArray()
            .map((row) =>
              Object.values(row)
                .map((value) => (value instanceof ArrayBuffer ? decoder.decode(value) : String(value)))
                .join(" "),
            )
            .join("\n"),
        )
        .join("\n");
      for (const word of ["zanzibarquux", "payloadqwerty", "xylophonequark"])
        expect(dump).not.toContain(word);
      expect((await manager.search("lunch")).map((hit) => hit.id)).toEqual(["k1"]);
    });
  }, 120_000);
});
