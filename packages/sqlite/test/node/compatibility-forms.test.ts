import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

const message = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });

// A search row holds the text as written, then the words it holds in a compatibility form in the form search
// reads them (`searchableText`, @contextblocks/text); a hit hands back the text as written.
describe("the search rows of text in a compatibility form", () => {
  for (const layout of ["lean", "keyed"] as const) {
    it(`${layout}: a row an earlier release wrote as written is found by its ordinary words and by the form`, async () => {
      const database = new Database(":memory:");
      const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: layout });
      await store.appendMessage(message("old", "Gravel and ｔｉｄｅ"));
      await store.appendMessage(message("new", "The ﬁnance office"));
      expect((await store.searchMessages("finance", 5)).map((hit) => hit.id)).toEqual(["new"]);
      // As the release before wrote the row: the text alone.
      database.prepare("UPDATE assistant_fts SET content = ? WHERE id = 'old'").run("Gravel and ｔｉｄｅ");
      for (const query of ["gravel", "ｔｉｄｅ"]) {
        const hits = (await store.searchMessages(query, 5)).filter((hit) => hit.matchedBy === "text");
        expect(hits.map((hit) => [hit.id, hit.content])).toEqual([["old", "Gravel and ｔｉｄｅ"]]);
      }
    });
  }

  it("a long text of full-width words keeps its row within the indexed bytes, words included", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat" });
    // 3 bytes a character but the spaces: about 647,000 bytes, over the 600,000 a row's text may take.
    const fullWidth = (digits: string) =>
      digits.replace(/[0-9]/g, (digit) => String.fromCharCode(0xff10 + Number(digit)));
    const words = Array.from({ length: 1_000 }, (_, index) => `ｗ${fullWidth(String(index))}`);
    const text = `ｔｉｄｅ ${words.join(" ")} `.repeat(60).slice(0, 250_000);
    expect(Buffer.byteLength(text)).toBeGreaterThan(640_000);
    await store.appendMessage(message("long", text));
    const hits = await store.searchMessages("tide", 5);
    expect(hits.map((hit) => hit.id)).toEqual(["long"]);
    const shown = hits[0]?.content ?? "";
    expect(text.startsWith(shown) && shown.length > 100_000).toBe(true);
    const { bytes } = database
      .prepare("SELECT length(CAST(content AS BLOB)) AS bytes FROM assistant_fts WHERE id = 'long'")
      .get() as { bytes: number };
    expect(bytes).toBeLessThanOrEqual(600_000);
    expect(bytes).toBeGreaterThan(590_000);
  });
});
