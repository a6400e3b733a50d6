import { describe, expect, it } from "vitest";
import { keysOf, openProvider } from "../support/databases.js";

// macOS and some keyboards send text decomposed (NFD: "한" as its three jamo, "й" as "и" and a combining
// breve, "が" as "か" and a voiced mark), most clients composed (NFC); FTS5 indexes the two forms as different words.
describe("a word stored in one Unicode form and searched in the other", () => {
  it("is found either way, and the entry comes back as it was stored", async () => {
    const { provider } = openProvider();
    const korean = "오늘 한국어 수업이 있어요".normalize("NFD");
    await provider.set("korean", korean);
    await provider.set("russian", "Мой родной край далеко".normalize("NFD"));
    await provider.set("greek", "Ο καφές είναι έτοιμος");
    await provider.set("japanese", "わたしは ラジオが すきです".normalize("NFD"));
    await provider.set("other", "Nothing to do with the rest.");
    for (const form of ["NFC", "NFD"] as const) {
      expect(keysOf(await provider.search("한국어".normalize(form)))).toEqual(["korean"]);
      expect(keysOf(await provider.search("край".normalize(form)))).toEqual(["russian"]);
      expect(keysOf(await provider.search("καφές".normalize(form)))).toEqual(["greek"]);
      expect(keysOf(await provider.search("ラジオが".normalize(form)))).toEqual(["japanese"]);
    }
    expect(await provider.search("korean")).toBe(`[korean]\n${korean}`);
  });
});
