import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { heldStems, stemLeadOf } from "../src/held-stems.js";
import { porterStem } from "../src/porter.js";
import { isStopword } from "../src/stopwords.js";
import { tokenize, tokenRun } from "../src/tokenize.js";

/** The definition `heldStems` shortcuts: stem every token that is not a stopword, keep the wanted ones. */
function heldByStemmingAll(text: string, stems: ReadonlySet<string>): Set<string> {
  return new Set(
    tokenize(text)
      .filter((token) => !isStopword(token.folded) && stems.has(token.stem))
      .map((token) => token.stem),
  );
}

const words = [
  "Caroline",
  "married",
  "marriage",
  "ties",
  "ies",
  "happy",
  "happiness",
  "stability",
  "possibility",
  "relational",
  "Ärger",
  "élan",
  "Éclair",
  "naïve",
  "İstanbul",
  "ß",
  "straße",
  "Москва",
  "ёлка",
  "東京",
  "\u0301accent",
  "e\u0301te\u0301",
  "I'm",
  "don't",
  "the",
  "a",
  "NOT",
  "2023",
  "x",
  "yes",
  "sses",
  "s",
  "running",
  "runs",
  "👩‍💻",
  "₂",
  "Ⅻ",
  "ǅemal",
  "ﬁne",
  "\u{1D400}bold",
];

const text = fc
  .array(fc.oneof(fc.constantFrom(...words), fc.string({ unit: "grapheme", maxLength: 12 })), {
    maxLength: 20,
  })
  .map((parts) => parts.join(" "));

describe("heldStems", () => {
  it("finds the same stems as stemming every word", () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }),
        (source, other, extra) => {
          // Wanted stems drawn from the text itself, from another text and at random.
          const stems = new Set([
            ...tokenize(source)
              .map((token) => token.stem)
              .filter((_, index) => index % 2 === 0),
            ...tokenize(other).map((token) => token.stem),
            ...extra,
          ]);
          expect(heldStems(source, stems)).toEqual(heldByStemmingAll(source, stems));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("reads only the words that end within the characters it is given", () => {
    fc.assert(
      fc.property(text, fc.nat({ max: 300 }), (source, maximum) => {
        const stems = new Set(tokenize(source).map((token) => token.stem));
        // The words wholly within the first `maximum` characters: a word running past them is left out whole.
        let cut = Math.min(maximum, source.length);
        for (const run of source.matchAll(tokenRun)) {
          if (run.index < cut && run.index + run[0].length > cut) cut = run.index;
        }
        expect(heldStems(source, stems, maximum)).toEqual(heldByStemmingAll(source.slice(0, cut), stems));
      }),
      { numRuns: 2_000 },
    );
    const pasted = `${"harbour ".repeat(10)}painting ${"x".repeat(1_000_000)} tides`;
    expect(heldStems(pasted, new Set(["harbour", "paint", "tide"]), 87)).toEqual(new Set(["harbour"]));
    expect(heldStems(pasted, new Set(["harbour", "paint", "tide"]), 88)).toEqual(
      new Set(["harbour", "paint"]),
    );
  });

  it("holds what the skip relies on: a stem starts with its word's first letter", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...words), fc.stringMatching(/^[a-z]{1,16}$/)), (word) => {
        for (const token of tokenize(word)) {
          expect(porterStem(token.folded)[0]).toBe(token.folded[0]);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it("holds what the lead check relies on: a folded word starts with its stem's lead", () => {
    // Porter's suffixes and what it writes in their place, chained as its steps chain them.
    const suffixes = [
      ...["ational", "tional", "enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli"],
      ...["ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti"],
      ...["ical", "ness", "icate", "iciti", "ful", "ative", "alize", "al", "ance", "ence", "er", "ic"],
      ...["able", "ible", "ant", "ement", "ment", "ent", "ion", "tion", "ou", "ism", "ate", "iti", "ous"],
      ...["ive", "ize", "s", "ies", "sses", "ed", "eed", "ing", "y", "ly", "e", "ll", "at", "bl", "iz"],
      ...["bility", "ivity", "ality", "logy", "ably", "ously", "ently", "ally", "ely", "ying", "ied"],
    ];
    const starts = [
      "",
      "a",
      "b",
      "y",
      "ay",
      "oy",
      "ab",
      "poss",
      "sens",
      "hop",
      "tab",
      "rel",
      "bb",
      "yy",
      "ee",
    ];
    const checked: string[] = [];
    for (const start of starts) {
      for (const first of suffixes) {
        checked.push(start + first);
        for (const second of suffixes) checked.push(start + first + second, `${start + first + second}s`);
      }
    }
    // Every word of up to five letters from an alphabet of vowels, y and consonants Porter treats apart.
    const alphabet = "abeilnostuyz";
    let level = [""];
    for (let length = 1; length <= 5; length++) {
      level = level.flatMap((prefix) => [...alphabet].map((letter) => prefix + letter));
      for (const word of level) checked.push(word);
    }
    for (const word of [
      ...checked,
      ...words.flatMap((word) => tokenize(word).map((token) => token.folded)),
    ]) {
      const stem = porterStem(word);
      if (!word.startsWith(stemLeadOf(stem)))
        expect({ word, stem }).toBe("a stem whose lead starts its word");
    }
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,20}$/), (word) => {
        expect(word.startsWith(stemLeadOf(porterStem(word)))).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("finds a stem when only its lead and first letter tell the word apart", () => {
    // "sensibility" stems to "sensibl", whose lead "sensib" is all the word keeps of it.
    expect(
      heldStems("Sensibility, hopping, ties and relational", new Set(["sensibl", "hop", "ti", "relat"])),
    ).toEqual(new Set(["sensibl", "hop", "ti", "relat"]));
    expect(heldStems("sensitive sensor", new Set(["sensibl"]))).toEqual(new Set());
  });

  it("finds a stem beside, and inside, words too long to be remembered", () => {
    const long = `${"x".repeat(100_000)}painting`;
    const stems = new Set([porterStem(long), "paint"]);
    expect(heldStems(`${long} painted`, stems)).toEqual(new Set([porterStem(long), "paint"]));
    // Asked again (nothing remembered of the long word), the same answer.
    expect(heldStems(`${long} painted`, stems)).toEqual(heldByStemmingAll(`${long} painted`, stems));
  });

  it("leaves out stopwords, as the search's plan does", () => {
    expect(heldStems("The marriage was not the end", new Set(["the", "not", "marriag"]))).toEqual(
      new Set(["marriag"]),
    );
    expect(heldStems("anything", new Set())).toEqual(new Set());
  });
});
