import { planQuery } from "@contextblocks/text";
import { describe, expect, it } from "vitest";
import { foldedText, holdsPair, planPairs, rankWithPairs } from "../../src/pair-bonus.js";
import { keysOf, openProvider } from "../support/databases.js";

function pairsOf(query: string) {
  return planPairs(planQuery(query));
}

function holds(text: string, query: string): boolean[] {
  return pairsOf(query).map((pair) => holdsPair(foldedText(text), pair));
}

describe("holdsPair", () => {
  it("finds adjacent query words across any separators, at word starts only", () => {
    expect(holds("The New York pizza", "new york pizza")).toEqual([true, true]);
    expect(holds("new -- york, pizza", "new york pizza")).toEqual([true, true]);
    expect(holds("new branch in york; pizza", "new york pizza")).toEqual([false, true]);
    // "renew" ends with "new": not the start of a word.
    expect(holds("renew york", "new york pizza")).toEqual([false, false]);
    // Words run together are one word, not a pair.
    expect(holds("newyork", "new york pizza")).toEqual([false, false]);
  });

  it("finds other forms of the words, as the index's stemmer would", () => {
    // "parental" stems to "parent", "leave" to "leav": "parents' leaves" holds the pair.
    expect(holds("the parents' leaves", "how long is parental leave?")).toEqual([true]);
    // "happy" stems to "happi": both spellings begin a word that stems the same.
    expect(holds("a happier dog barked", "happy dog barks loudly")[0]).toBe(true);
  });

  it("finds words written with or without the diacritics the index folds away", () => {
    expect(holds("Un café crème, s'il vous plaît", "café crème brûlée")).toEqual([true, false]);
    expect(holds("UNE CRÈME BRÛLÉE", "cafe creme brulee")).toEqual([false, true]);
    // Decomposed accents (e + U+0301) fold the same as composed ones.
    expect(holds("cafe\u0301 cre\u0300me", "café crème brûlée")).toEqual([true, false]);
    // Cyrillic keeps its diacritics in the index, so "й" is not "и".
    expect(holds("мой дом", "мой дом стоит")[0]).toBe(true);
    expect(holds("мои дом", "мой дом стоит")[0]).toBe(false);
  });

  it("plans no pairs for queries of fewer than three terms or across a stopword", () => {
    expect(pairsOf("ice cream")).toEqual([]);
    expect(pairsOf("long is parental leave")).toHaveLength(1);
  });
});

describe("rankWithPairs", () => {
  it("lifts the rows holding pairs, keeps FTS5's order among equals, and cuts to the limit", () => {
    const rows = [
      { key: "a", content: "pizza york new", context: null, score: -3 },
      { key: "b", content: "york pizza", context: null, score: -2 },
      { key: "c", content: "nothing here", context: "new york", score: -1 },
      { key: "d", content: "pizza", context: null, score: -1 },
    ];
    const ranked = rankWithPairs(rows, pairsOf("new york pizza"), 3, false, 3);
    // b: -2 × (1 + 2/3); c: -1 × (1 + 2/3) from its context; a and d hold no pair.
    expect(ranked.map((row) => row.key)).toEqual(["b", "a", "c"]);
    expect(Number(ranked[0]?.score)).toBeCloseTo(-2 * (1 + 2 / 3));
  });

  it("reads keys only when keys are searched", () => {
    const rows = [
      { key: "x", content: "one", context: null, score: -1.5 },
      { key: "new york", content: "two", context: null, score: -1 },
    ];
    const pairs = pairsOf("new york pizza");
    expect(rankWithPairs(rows, pairs, 3, true, 2).map((row) => row.key)).toEqual(["new york", "x"]);
    expect(rankWithPairs(rows, pairs, 3, false, 2).map((row) => row.key)).toEqual(["x", "new york"]);
  });
});

describe("search with pairs", () => {
  it("puts the entry that holds the pair above entries holding more of the words apart", async () => {
    const { provider } = openProvider();
    for (let index = 0; index < 30; index++) {
      await provider.set(`other-${index}`, `Notes on the garden, week ${index}: weeding and watering.`);
    }
    // Each holds all three words, apart; by the words alone they rank above the entry with the pair.
    for (let index = 0; index < 5; index++) {
      await provider.set(
        `apart-${index}`,
        `Solar notes ${index}: the installation of the new fence; a panel of judges met.`,
      );
    }
    await provider.set("pair", "We put a solar panel on the shed roof last week.");
    const keys = keysOf(await provider.search("solar panel installation"));
    expect(keys[0]).toBe("pair");
  });

  it("finds the pair in accented text, whether the query has the accents or not", async () => {
    const { provider } = openProvider();
    for (let index = 0; index < 30; index++) {
      await provider.set(`other-${index}`, `Notes du jardin, semaine ${index} : désherbage et arrosage.`);
    }
    for (let index = 0; index < 5; index++) {
      await provider.set(
        `apart-${index}`,
        `Crème, notes ${index} : la recette de la tarte ; une pâte brûlée au four.`,
      );
    }
    await provider.set("pair", "Une crème brûlée maison pour dimanche.");
    expect(keysOf(await provider.search("recette crème brûlée"))[0]).toBe("pair");
    expect(keysOf(await provider.search("recette creme brulee"))[0]).toBe("pair");
  });
});
