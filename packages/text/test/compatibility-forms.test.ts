import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { compatibilityCharacters, compatibleWord } from "../src/compatibility-forms.js";
import { fts5MatchExpression } from "../src/fts5-match.js";
import { heldStems } from "../src/held-stems.js";
import { planQuery } from "../src/plan.js";
import { tokenize } from "../src/tokenize.js";

const words = (text: string) => tokenize(text).map((token) => token.folded);

describe("text in a compatibility form or holding invisible characters", () => {
  it("reads full-width Latin and digits, ligatures and styled letters as the plain word", () => {
    expect(words("ｔｉｄｅ ２０２３ ＴＩＤＥ")).toEqual(["tide", "2023", "tide"]);
    expect(words("ﬁnance ﬂow")).toEqual(["finance", "flow"]);
    expect(words("𝐛𝐨𝐥𝐝 𝘪𝘵𝘢𝘭𝘪𝘤")).toEqual(["bold", "italic"]);
  });

  it("drops a soft hyphen, zero-width characters, a word joiner and a byte order mark inside a word", () => {
    for (const invisible of ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) {
      expect(words(`the ti${invisible}de`)).toEqual(["the", "tide"]);
    }
    expect(words("\ufeffhello")).toEqual(["hello"]);
    expect(words("a \u00ad b")).toEqual(["a", "b"]);
  });

  it("folds the edges chosen: superscripts, letterlike symbols, half-width katakana", () => {
    expect(words("m² H₂O ℌ")).toEqual(["m2", "h2o", "h"]);
    expect(words("ｶﾀｶﾅ ｶﾞｽ")).toEqual(["カタカナ", "ガス"]);
  });

  it("keeps what a compatibility form would change into other words or letters", () => {
    // "½" would be "1⁄2", two words; compatibility jamo would compose with the next vowel ("ㄱㅏ" as "가").
    expect(words("½ ㅋㅋ ㄱㅏ ﾡ Straße")).toEqual(["½", "ㅋㅋ", "ㄱㅏ", "ﾡ", "straße"]);
    // Ordinary Thai, Lao and Armenian spelling stays as written.
    for (const word of ["ำ", "ຳ", "և"]) expect(compatibleWord(word)).toBe(word);
    // Symbols between words stay separators, as in FTS5's unicode61.
    expect(words("Apple™ 25℃ 3㎏")).toEqual(["apple", "25", "3"]);
  });

  it("leaves ordinary text as it is", () => {
    for (const text of ["tide", "café Ångström", "Москва", "東京タワー", "한국어", "ὀδύσσεια", "مرحبا"]) {
      expect(compatibleWord(text)).toBe(text);
    }
  });

  it("lists exactly the letters and digits whose compatibility form is letters and digits, less those kept", () => {
    const listed = new RegExp(`^[${compatibilityCharacters}]$`, "u");
    const tokenCharacter = /^[\p{L}\p{N}\p{Co}]$/u;
    const lettersAndDigits = /^(?:[\p{L}\p{N}\p{Co}]|[\u0300-\u036f\u3099\u309a])+$/u;
    const kept = (point: number) =>
      (point >= 0x3131 && point <= 0x318e) ||
      (point >= 0xffa0 && point <= 0xffdc) ||
      (point >= 0x0e00 && point <= 0x0eff) ||
      point === 0x0587;
    const wrong: string[] = [];
    for (let point = 0; point <= 0x10ffff; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const character = String.fromCodePoint(point);
      const compatible = character.normalize("NFKC");
      const expected =
        tokenCharacter.test(character) &&
        !kept(point) &&
        compatible !== character.normalize("NFC") &&
        lettersAndDigits.test(compatible);
      if (listed.test(character) !== expected) wrong.push(point.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it("plans a query typed in such a form as the plain word, and the plain word's plan finds folded text in FTS5", () => {
    const plan = planQuery("ｔｉｄｅ ta\u00adbles");
    expect(plan?.terms.map((term) => term.word)).toEqual(["tide", "tables"]);
    const database = new Database(":memory:");
    database.exec("CREATE VIRTUAL TABLE notes USING fts5(text, tokenize = 'porter unicode61')");
    database.prepare("INSERT INTO notes (text) VALUES (?)").run("high tide and tables");
    const match = fts5MatchExpression(plan ?? { terms: [], pairs: [], phrase: null, asksWhen: false });
    expect(database.prepare("SELECT count(*) AS found FROM notes WHERE notes MATCH ?").get(match)).toEqual({
      found: 1,
    });
    database.close();
  });

  it("also asks FTS5 for the word as typed, which a row indexed as written by an earlier release holds", () => {
    const plan = planQuery("ｔｉｄｅ ti\u00adde tide");
    expect(plan?.terms).toEqual([{ word: "tide", stem: "tide", written: "ｔｉｄｅ", typed: "ｔｉｄｅ" }]);
    expect(planQuery("café tide")?.terms.every((term) => term.typed === undefined)).toBe(true);
    const database = new Database(":memory:");
    database.exec("CREATE VIRTUAL TABLE notes USING fts5(text, tokenize = 'porter unicode61')");
    const insert = database.prepare("INSERT INTO notes (rowid, text) VALUES (?, ?)");
    insert.run(1, "ＨＩＧＨ ｔｉｄｅ");
    insert.run(2, "ti\u00adde tables");
    const found = (query: string) => {
      const queryPlan = planQuery(query);
      if (queryPlan === null) return [];
      return database
        .prepare("SELECT rowid FROM notes WHERE notes MATCH ? ORDER BY rowid")
        .all(fts5MatchExpression(queryPlan))
        .map((row) => (row as { rowid: number }).rowid);
    };
    expect(found("ｔｉｄｅ")).toEqual([1]);
    expect(found("ti\u00adde")).toEqual([2]);
    database.close();
  });

  it("finds the stems of such words when re-ranking, as tokenize reads them", () => {
    expect([...heldStems("the ｔｉｄｅs and ﬁnances", new Set(["tide", "financ"]))].sort()).toEqual([
      "financ",
      "tide",
    ]);
    expect([...heldStems("ti\u00adde", new Set(["tide"]))]).toEqual(["tide"]);
  });
});
