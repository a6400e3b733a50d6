import { describe, expect, it } from "vitest";
import { indexTable } from "../../src/schema.js";
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

// Full-width Latin from CJK input methods, ligatures, and invisible characters pasted from web pages and word
// processors: FTS5's unicode61 indexes "ｔｉｄｅ" as itself and cuts "ti\u00adde" into "ti" and "de".
describe("a word in a compatibility form or holding invisible characters", () => {
  const entries: [string, string][] = [
    ["wide", "ＨＩＧＨ ｔｉｄｅ at ０６:２０"],
    ["ligature", "The ﬁnance office"],
    ["pasted", "Har\u00adbour\u200bmaster on call; gra\u2060nite\ufeff steps"],
    ["plain", "Gravel and sand"],
  ];

  it("is found by the plain word, the plain word by it, and the entry comes back as it was stored", async () => {
    const { provider } = openProvider();
    for (const [key, content] of entries) await provider.set(key, content);
    expect(keysOf(await provider.search("tide"))).toEqual(["wide"]);
    expect(keysOf(await provider.search("0620"))).toEqual([]);
    expect(keysOf(await provider.search("06"))).toEqual(["wide"]);
    expect(keysOf(await provider.search("finance"))).toEqual(["ligature"]);
    expect(keysOf(await provider.search("harbourmaster"))).toEqual(["pasted"]);
    expect(keysOf(await provider.search("granite"))).toEqual(["pasted"]);
    expect(keysOf(await provider.search("ｇｒａｖｅｌ"))).toEqual(["plain"]);
    expect(keysOf(await provider.search("sa\u00adnd"))).toEqual(["plain"]);
    for (const [key, content] of entries) expect(await provider.search(key)).toBe(`[${key}]\n${content}`);
    expect(await provider.search("finance office")).toContain("The ﬁnance office");
  });

  it("finds an entry an earlier release stored as written by its ordinary words, and returns it whole", async () => {
    const { provider, database } = openProvider();
    await provider.set("plain", "Gravel and sand");
    // As the previous release wrote it: the content alone, and content that happens to end like the words mark.
    database
      .prepare(`UPDATE ${indexTable} SET content = ? WHERE key = 'plain'`)
      .run("Gravel and sand\n\u2060 tide");
    expect(keysOf(await provider.search("gravel"))).toEqual(["plain"]);
    expect(await provider.search("plain")).toBe("[plain]\nGravel and sand\n\u2060 tide");
  });
});
