import { describe, expect, test } from "vitest";
import type { SearchCandidate } from "../src/search-hits.js";
import { endsWithQuestion, rerankedCharacters, rerankSearchCandidates } from "../src/search-rerank.js";

const candidate = (
  id: string,
  score: number | undefined,
  text: string,
  parentId: string | null = null,
  matchedBy: "text" | "neighbours" = "text",
): SearchCandidate => ({
  id,
  role: "user",
  text,
  createdAt: null,
  matchedBy,
  parentId,
  ...(score === undefined ? {} : { score }),
});

const none = { questionDiscount: 0, replyLift: 0, coverageWeight: 0 };

describe("endsWithQuestion", () => {
  test("a question mark at the end, trailing punctuation, quotes and emoji aside", () => {
    expect(endsWithQuestion("Caroline: How long have you been married?")).toBe(true);
    expect(endsWithQuestion("Any plans for the summer?! 😊 ")).toBe(true);
    expect(endsWithQuestion("Coffee later? ❤️")).toBe(true);
    expect(endsWithQuestion('She asked "why not?"')).toBe(true);
    expect(endsWithQuestion("(is it?)")).toBe(true);
  });

  test("a question inside the text, or none, is not a question turn", () => {
    expect(endsWithQuestion("Why? Because I love it.")).toBe(false);
    expect(endsWithQuestion("5 years already!")).toBe(false);
    expect(endsWithQuestion("")).toBe(false);
    expect(endsWithQuestion(`${"?".repeat(100_000)}x`)).toBe(false);
  });

  test("reads the end's characters as Array.from cuts them: pairs, lone surrogates, a pair cut at the start", () => {
    // The reading it replaces: the last 64 units cut into characters, walked back from the end.
    const byCharacters = (text: string): boolean => {
      const characters = Array.from(text.slice(-64));
      for (let index = characters.length - 1; index >= 0; index--) {
        const character = characters[index] as string;
        if (character === "?" || character === "？") return true;
        if (
          !/[\s!.)\]"'’”\p{Extended_Pictographic}]/u.test(character) &&
          !["\uFE0F", "\u200D"].includes(character)
        ) {
          return false;
        }
      }
      return false;
    };
    const pieces = [
      "?",
      "？",
      "!",
      ".",
      " ",
      ")",
      "]",
      '"',
      "’",
      "”",
      "😊",
      "❤️",
      "👩‍💻",
      "\uD83D",
      "\uDE0A",
      "a",
      "é",
      "\n",
    ];
    // Every run of up to three pieces, after emoji and spaces that move the start of what is read through the
    // emoji (cutting one in two, or not).
    let runs = [""];
    const all = [""];
    for (let length = 1; length <= 3; length++) {
      runs = runs.flatMap((run) => pieces.map((piece) => run + piece));
      all.push(...runs);
    }
    for (let pad = 44; pad <= 64; pad++) {
      for (const run of all) {
        const text = `?${"😊".repeat(4)}${" ".repeat(pad)}${run}`;
        if (endsWithQuestion(text) !== byCharacters(text)) expect(text).toBe("read as Array.from reads it");
      }
    }
    // The 64th unit from the end is the second half of an emoji: read alone, as a lone surrogate.
    const cut = `?😊${" ".repeat(63)}`;
    expect(endsWithQuestion(cut)).toBe(byCharacters(cut));
    expect(endsWithQuestion(`x?${"😊".repeat(31)}`)).toBe(byCharacters(`x?${"😊".repeat(31)}`));
  });
});

describe("rerankSearchCandidates", () => {
  test("the reply to a question moves up to right after it; one above it on its own words stays above", () => {
    const weights = { questionDiscount: 0.2, replyLift: 0.4, coverageWeight: 0 };
    const lifted = rerankSearchCandidates(
      "married",
      [
        candidate("ask", 10, "Caroline: How long have you been married?"),
        candidate("other", 7.5, "Mel: I was busy all week."),
        candidate("reply", 7, "Mel: 5 years already!", "ask", "neighbours"),
      ],
      weights,
    );
    expect(lifted.map((hit) => hit.id)).toEqual(["ask", "reply", "other"]);
    const above = rerankSearchCandidates(
      "married",
      [
        candidate("ask", 10, "Married yet?"),
        candidate("reply", 9, "Married in May.", "ask"),
        candidate("other", 8.5, "We married young."),
      ],
      weights,
    );
    expect(above.map((hit) => hit.id)).toEqual(["reply", "other", "ask"]);
  });

  test("the lift moves a reply up, its score unchanged: whether it is a hit stays the ranking's call", () => {
    const reranked = rerankSearchCandidates(
      "married",
      [
        candidate("ask", 10, "Married yet?"),
        candidate("statement", 6, "We married in May."),
        candidate("reply", 5, "Not yet.", "ask", "neighbours"),
      ],
      { questionDiscount: 0, replyLift: 0.4, coverageWeight: 0 },
    );
    expect(reranked.map((hit) => [hit.id, hit.score])).toEqual([
      ["ask", 10],
      ["reply", 5],
      ["statement", 6],
    ]);
  });

  test("without a question before it, a turn gains nothing from its parent", () => {
    const reranked = rerankSearchCandidates(
      "married",
      [
        candidate("statement", 10, "I got married."),
        candidate("reply", 7, "Congratulations!", "statement", "neighbours"),
      ],
      { questionDiscount: 0.2, replyLift: 0.4, coverageWeight: 0 },
    );
    expect(reranked.map((hit) => [hit.id, hit.score])).toEqual([
      ["statement", 10],
      ["reply", 7],
    ]);
  });

  test("a parent of the same id in another session is not the parent", () => {
    const reranked = rerankSearchCandidates(
      "married",
      [
        { ...candidate("ask", 10, "Married yet?"), sessionId: "one" },
        { ...candidate("reply", 7, "Not yet.", "ask", "neighbours"), sessionId: "two" },
      ],
      { questionDiscount: 0, replyLift: 0.4, coverageWeight: 0 },
    );
    expect(reranked.map((hit) => [hit.id, hit.score])).toEqual([
      ["ask", 10],
      ["reply", 7],
    ]);
  });

  test("coverage lifts the candidate holding the query's rarer term", () => {
    const candidates = [
      candidate("common", 10, "painting painting again"),
      candidate("rare", 10, "a sunrise over the lake"),
      candidate("filler", 10, "painting the fence"),
    ];
    const reranked = rerankSearchCandidates("painting the sunrise", candidates, {
      ...none,
      coverageWeight: 0.2,
    });
    expect(reranked.map((hit) => hit.id)).toEqual(["rare", "common", "filler"]);
  });

  test("coverage reads a candidate's first 32 kB: a term past them lifts nothing", () => {
    const pasted = (at: number) => `${"log line ".repeat(Math.ceil(at / 9)).slice(0, at)} sunrise`;
    const candidates = [
      candidate("late", 10, pasted(rerankedCharacters)),
      candidate("early", 10, pasted(rerankedCharacters - 10)),
      candidate("none", 10, "painting the fence"),
    ];
    const reranked = rerankSearchCandidates("painting the sunrise", candidates, {
      ...none,
      coverageWeight: 0.2,
    });
    // "sunrise" ends 8 characters past the limit in "late", within it in "early".
    expect(reranked.map((hit) => hit.id)).toEqual(["early", "none", "late"]);
    // 2 MB rows, as large as a Durable Object holds: their words past the first 32 kB lift none of them (read
    // whole, the first, the only one without "painting", would fall behind the others).
    const large = Array.from({ length: 30 }, (_, index) =>
      candidate(`large-${index}`, 10, `${"x".repeat(2_000_000)} sunrise ${index === 0 ? "" : "painting"}`),
    );
    const order = rerankSearchCandidates("painting the sunrise", large, { ...none, coverageWeight: 0.2 });
    expect(order.map((hit) => hit.id)).toEqual(large.map((hit) => hit.id));
  });

  test("all-zero weights, and candidates without a score, keep the store's order and scores", () => {
    const candidates = [
      candidate("a", 1, "Is it?"),
      candidate("b", 0.9, "Yes.", "a"),
      candidate("c", 0.9, "It is."),
    ];
    expect(rerankSearchCandidates("it", candidates, none)).toEqual(candidates);
    const unscored = candidates.map(({ score: _score, ...rest }) => rest);
    expect(rerankSearchCandidates("it", unscored)).toEqual(unscored);
  });

  test("a store's order that is not its scores' (a day's share) stays where nothing changes", () => {
    const candidates = [
      candidate("best-day", 5, "statement one"),
      candidate("other-day", 8, "statement two"),
      candidate("last", 3, "statement three"),
    ];
    const reranked = rerankSearchCandidates("anything", candidates, { ...none, questionDiscount: 0.5 });
    expect(reranked.map((hit) => hit.id)).toEqual(["best-day", "other-day", "last"]);
    // A change moves a candidate from its place (the question drops below the turn after it), never its score.
    const asked = rerankSearchCandidates(
      "anything",
      [candidate("best-day", 5, "statement?"), ...candidates.slice(1)],
      { ...none, questionDiscount: 0.5 },
    );
    expect(asked.map((hit) => [hit.id, hit.score])).toEqual([
      ["other-day", 8],
      ["best-day", 5],
      ["last", 3],
    ]);
  });

  test("ties keep the store's order, and the input is not changed", () => {
    const candidates = [candidate("first", 5, "one"), candidate("second", 5, "two")];
    const copy = structuredClone(candidates);
    expect(rerankSearchCandidates("three", candidates).map((hit) => hit.id)).toEqual(["first", "second"]);
    expect(candidates).toEqual(copy);
  });
});

describe("rerankSearchCandidates across sessions", () => {
  test("a reply is lifted by its own question only, whatever characters the session and message ids hold", () => {
    const inSession = (sessionId: string, entry: SearchCandidate): SearchCandidate => ({
      ...entry,
      sessionId,
    });
    // Joined by a NUL alone, session "a" + message "b\0c" and session "a\0b" + message "c" were one key: the
    // reply below (whose parent "c" of session "a\0b" is no candidate) took the question's lift.
    const question = inSession("a", candidate("b\u0000c", 10, "How long have you been married?"));
    const other = inSession("x", candidate("o", 4, "married in June"));
    const reply = inSession("a\u0000b", candidate("r", 1, "Five years already!", "c"));
    const reranked = rerankSearchCandidates("married", [question, other, reply], {
      ...none,
      replyLift: 0.4,
    });
    expect(reranked.map((entry) => entry.id)).toEqual(["b\u0000c", "o", "r"]);
  });
});
