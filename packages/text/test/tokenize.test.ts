import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { porterStem } from "../src/porter.js";
import { tokenize } from "../src/tokenize.js";

/**
 * The query side predicts which index terms FTS5 makes (for document frequencies and for counting matched
 * terms). These tests hold that prediction against the real `porter unicode61` tokenizer, read back through
 * `fts5vocab`.
 */

const stems = [
  "connect",
  "relate",
  "condition",
  "rational",
  "valence",
  "hesitance",
  "digitize",
  "conform",
  "radical",
  "different",
  "vile",
  "analogous",
  "vietnamize",
  "predicate",
  "operate",
  "feudal",
  "decisive",
  "hopeful",
  "callous",
  "formal",
  "sensitive",
  "sensible",
  "triplicate",
  "form",
  "electric",
  "good",
  "revive",
  "allow",
  "infer",
  "airline",
  "gyroscope",
  "adjust",
  "defend",
  "irritate",
  "replace",
  "depend",
  "adopt",
  "homolog",
  "commune",
  "activate",
  "angular",
  "effect",
  "bowdler",
  "probate",
  "rate",
  "cease",
  "control",
  "roll",
  "hop",
  "hope",
  "run",
  "plan",
  "fail",
  "file",
  "size",
  "tan",
  "fizz",
  "agree",
  "feed",
  "need",
  "sky",
  "happy",
  "deploy",
  "config",
  "shipment",
  "carrier",
  "normalise",
  "breakfast",
  "allergy",
  "penicillin",
  "migrate",
  "search",
  "provide",
  "index",
  "query",
  "stem",
  "token",
  "user",
  "cook",
  "bake",
  "spice",
  "travel",
  "train",
  "photograph",
  "garden",
  "climb",
  "swim",
  "pay",
  "tax",
  "rent",
  "mortgage",
  "lead",
  "read",
  "write",
  "sing",
];
const suffixes = [
  "",
  "s",
  "es",
  "ed",
  "ing",
  "er",
  "ers",
  "ly",
  "ness",
  "ful",
  "fully",
  "ation",
  "ations",
  "ational",
  "ment",
  "ments",
  "able",
  "ible",
  "ity",
  "ities",
  "ize",
  "izer",
  "ization",
  "ism",
  "ist",
  "ive",
  "ives",
  "iveness",
  "ous",
  "ously",
  "al",
  "alism",
  "ally",
  "ence",
  "ance",
  "ent",
  "ant",
  "ion",
  "ies",
  "y",
  "eed",
];
const special = [
  "caresses",
  "ponies",
  "ties",
  "caress",
  "cats",
  "feed",
  "agreed",
  "plastered",
  "bled",
  "motoring",
  "sing",
  "conflated",
  "troubled",
  "sized",
  "hopping",
  "tanned",
  "falling",
  "hissing",
  "fizzed",
  "failing",
  "filing",
  "happy",
  "sky",
  "relational",
  "conditional",
  "valenci",
  "hesitanci",
  "digitizer",
  "conformabli",
  "radicalli",
  "differentli",
  "vileli",
  "analogousli",
  "vietnamization",
  "predication",
  "operator",
  "feudalism",
  "decisiveness",
  "hopefulness",
  "callousness",
  "formaliti",
  "sensitiviti",
  "sensibiliti",
  "triplicate",
  "formative",
  "formalize",
  "electriciti",
  "electrical",
  "goodness",
  "revival",
  "allowance",
  "inference",
  "airliner",
  "gyroscopic",
  "adjustable",
  "defensible",
  "irritant",
  "replacement",
  "adjustment",
  "dependent",
  "adoption",
  "homologou",
  "communism",
  "angulariti",
  "homologous",
  "effective",
  "bowdlerize",
  "controll",
  "generalizations",
  "oscillators",
  "a",
  "ab",
  "abc",
  "1234",
  "x2y",
  "v8s",
  "iPhone15s",
  "Café",
  "naïve",
  "naïves",
  "ÉCOLE",
  "Über",
  "straße",
  "résumés",
  "Ångström",
  "façades",
  "Dvořák",
  "полнотекстовый",
  "приложений",
  "ёлка",
  "Ελληνικά",
  "東京",
  "日本語の検索",
  "सर्च",
  "مرحبا",
  "A".repeat(70),
  "ing".repeat(30),
  "eeeeed",
];

function words(): string[] {
  const list = new Set<string>(special);
  for (const stem of stems) for (const suffix of suffixes) list.add(stem + suffix);
  return [...list];
}

describe("query tokenization matches the index's porter unicode61", () => {
  it("stems every word as FTS5 does (fts5vocab)", () => {
    const database = new Database(":memory:");
    database.exec(`CREATE VIRTUAL TABLE words USING fts5(word, tokenize = 'porter unicode61');
      CREATE VIRTUAL TABLE word_terms USING fts5vocab(words, instance);`);
    const list = words();
    const insert = database.prepare("INSERT INTO words (rowid, word) VALUES (?, ?)");
    for (const [index, word] of list.entries()) insert.run(index + 1, word);
    const terms = new Map<number, string[]>();
    for (const row of database.prepare("SELECT doc, term FROM word_terms ORDER BY doc, offset").all() as {
      doc: number;
      term: string;
    }[]) {
      terms.set(row.doc, [...(terms.get(row.doc) ?? []), row.term]);
    }
    const mismatches = list
      .map((word, index) => ({
        word,
        fts5: terms.get(index + 1) ?? [],
        ours: tokenize(word).map((t) => t.stem),
      }))
      .filter(({ fts5, ours }) => JSON.stringify(fts5) !== JSON.stringify(ours));
    expect(list.length).toBeGreaterThan(3900);
    expect(mismatches).toEqual([]);
  });

  it("folds case and Latin diacritics only, and splits on everything that is not a letter or digit", () => {
    expect(tokenize("Ünïcödé, CAFÉ & naïve-résumé").map((token) => token.folded)).toEqual([
      "unicode",
      "cafe",
      "naive",
      "resume",
    ]);
    expect(tokenize("ёлка").map((token) => token.folded)).toEqual(["ёлка"]);
    expect(tokenize('"quoted" NEAR(a b) col:umn ^start *star').map((token) => token.folded)).toEqual([
      "quoted",
      "near",
      "a",
      "b",
      "col",
      "umn",
      "start",
      "star",
    ]);
    expect(tokenize("\u0000\u0007\t\n  ")).toEqual([]);
  });

  it("reads a word the same in either Unicode form, kana with voiced marks included", () => {
    // FTS5 cuts decomposed kana at each voiced mark; a query asks it for that form too (plan.test.ts).
    for (const text of ["わたしは ラジオが すき", "오늘 한국어", "мой край", "Ο καφές", "Tiếng Việt"]) {
      expect(tokenize(text.normalize("NFD"))).toEqual(tokenize(text.normalize("NFC")));
    }
    expect(tokenize("ラジオが".normalize("NFD")).map((token) => token.folded)).toEqual(["ラジオが"]);
    // A mark with nothing before it composes with nothing: dropped, as a lone combining accent is.
    expect(tokenize("\u3099か \u0301a").map((token) => token.folded)).toEqual(["か", "a"]);
  });

  it("leaves tokens shorter than 3 or longer than 64 bytes unstemmed", () => {
    expect(porterStem("is")).toBe("is");
    expect(porterStem("caresses")).toBe("caress");
    const long = "relational".repeat(7);
    expect(porterStem(long)).toBe(long);
  });
});
