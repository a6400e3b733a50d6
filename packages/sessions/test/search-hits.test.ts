import { estimateTokens } from "@contextblocks/core";
import { isWellFormed } from "@contextblocks/core/store-kit";
import { describe, expect, test } from "vitest";
import { type SearchCandidate, selectSearchHits } from "../src/search-hits.js";

const candidate = (
  id: string,
  score: number,
  matchedBy: "text" | "neighbours",
  parentId: string | null = null,
  text = `text of ${id}`,
): SearchCandidate => ({ id, role: "user", text, createdAt: null, score, matchedBy, parentId });

describe("selectSearchHits", () => {
  test("a candidate without text is never a hit", () => {
    const hits = selectSearchHits(
      [
        candidate("a", 1, "text"),
        candidate("call", 0.9, "neighbours", "a", " "),
        candidate("b", 0.8, "text"),
      ],
      10,
    );
    expect(hits.map((hit) => hit.id)).toEqual(["a", "b"]);
  });

  test("candidates below the weak share of the best are cut", () => {
    const hits = selectSearchHits(
      [candidate("a", 10, "text"), candidate("b", 2, "text"), candidate("c", 1, "text")],
      10,
      {
        weakShare: 0.15,
      },
    );
    expect(hits.map((hit) => hit.id)).toEqual(["a", "b"]);
  });

  test("a weak neighbour match becomes context of the hit it is the child or parent of", () => {
    const hits = selectSearchHits(
      [
        candidate("question", 10, "text", "before"),
        candidate("answer", 4, "neighbours", "question"),
        candidate("before", 3, "neighbours", null),
        candidate("far", 3, "neighbours", "elsewhere"),
      ],
      10,
      { neighbourShare: 0.6 },
    );
    expect(hits.map((hit) => [hit.id, hit.matchedBy])).toEqual([["question", "text"]]);
    expect(hits[0]?.context?.map((turn) => turn.id)).toEqual(["before", "answer"]);
  });

  test("a strong neighbour match is a hit, marked so, but never outnumbers the text matches", () => {
    const hits = selectSearchHits(
      [
        candidate("q1", 10, "text"),
        candidate("a1", 9, "neighbours", "q1"),
        candidate("a2", 9, "neighbours", "q1"),
        candidate("q2", 8, "text"),
        candidate("a3", 8, "neighbours", "q2"),
      ],
      10,
      { neighbourShare: 0.6 },
    );
    expect(hits.map((hit) => [hit.id, hit.matchedBy])).toEqual([
      ["q1", "text"],
      ["a1", "neighbours"],
      ["q2", "text"],
      ["a3", "neighbours"],
    ]);
    expect(hits[0]?.context?.map((turn) => turn.id)).toEqual(["a2"]);
  });

  test("a neighbour match ranked above every text match waits for the first and comes right after it", () => {
    const hits = selectSearchHits(
      [
        candidate("answer", 10, "neighbours", "question"),
        candidate("early", 9, "neighbours", "other"),
        candidate("question", 8, "text"),
        candidate("late", 7, "neighbours", "question"),
        candidate("second", 6, "text"),
      ],
      10,
      { neighbourShare: 0.6 },
    );
    expect(hits.map((hit) => [hit.id, hit.matchedBy])).toEqual([
      ["question", "text"],
      ["answer", "neighbours"],
      ["second", "text"],
      ["early", "neighbours"],
    ]);
    // A neighbour match ranked after a text match never waits: it is context when it cannot pair.
    expect(hits[0]?.context?.map((turn) => turn.id)).toEqual(["late"]);
  });

  test("a waiting neighbour match with no text match to pair with is context, never a hit", () => {
    const hits = selectSearchHits(
      [candidate("answer", 10, "neighbours", "question"), candidate("question", 8, "text")],
      1,
      { neighbourShare: 0.6 },
    );
    expect(hits.map((hit) => hit.id)).toEqual(["question"]);
    expect(hits[0]?.context?.map((turn) => turn.id)).toEqual(["answer"]);
  });

  test("a hit's context reads in order, the turn before it first, whatever order the ranking met them in", () => {
    const hits = selectSearchHits(
      [
        candidate("answer", 10, "text", "question"),
        candidate("next", 3, "neighbours", "answer"),
        candidate("question", 2, "neighbours", null),
      ],
      10,
    );
    expect(hits[0]?.context?.map((turn) => [turn.id, turn.position])).toEqual([
      ["question", "before"],
      ["next", "after"],
    ]);
  });

  test("a hit's context stays within its token budget", () => {
    const long = "word ".repeat(400);
    const hits = selectSearchHits(
      [
        candidate("q", 10, "text"),
        candidate("a", 1, "neighbours", "q", long),
        candidate("b", 1, "neighbours", "q", long),
      ],
      10,
      { contextTokens: 50 },
    );
    const context = hits[0]?.context ?? [];
    expect(context.length).toBeGreaterThan(0);
    expect(context[0]?.text.endsWith("…")).toBe(true);
    expect(context.reduce((sum, turn) => sum + estimateTokens(turn.text), 0)).toBeLessThanOrEqual(50);
  });

  test("a context turn of a few tokens and megabytes of whitespace, or a pasted file, is cut short", () => {
    const spaced = `Earlier:${" ".repeat(1_000_000)}the end`;
    const pasted = "lorem ipsum ".repeat(25_000);
    const hits = selectSearchHits(
      [
        candidate("q", 10, "text"),
        candidate("a", 1, "neighbours", "q", spaced),
        candidate("b", 1, "neighbours", "q", pasted),
      ],
      10,
    );
    const context = hits[0]?.context ?? [];
    expect(context.map((turn) => turn.id)).toEqual(["a", "b"]);
    // 120 tokens a hit: whitespace counts for none, so only the cut keeps the first turn short.
    // Lengths first: a failing comparison of megabytes would print them.
    expect(context.map((turn) => turn.text.length < 1_000)).toEqual([true, true]);
    expect(context[0]?.text).toBe("Earlier:…");
    expect(context[1]?.text.endsWith("…")).toBe(true);
  });

  test("a context turn is never cut inside a character: emoji and other astral letters stay whole", () => {
    // 😀 is two UTF-16 units with no space between: a cut counted in units alone may split one.
    const turn = candidate("a", 1, "neighbours", "q", "😀".repeat(500));
    const texts = [8, 9, 10, 20, 30, 60, 120].map(
      (contextTokens) =>
        selectSearchHits([candidate("q", 10, "text"), turn], 10, { contextTokens })[0]?.context?.[0]?.text ??
        "",
    );
    expect(texts.every((text) => text.endsWith("…"))).toBe(true);
    // A lone surrogate has no UTF-8 form: a model API reading it in a tool result may refuse the request.
    expect(texts.filter((text) => !isWellFormed(text))).toEqual([]);
  });

  test("without scores the store's order and count are kept, as text matches", () => {
    const hits = selectSearchHits(
      [
        { id: "a", role: "user", text: "x", createdAt: null },
        { id: "b", role: "user", text: "y", createdAt: "2024-01-01T00:00:00.000Z" },
      ],
      1,
    );
    expect(hits).toEqual([{ id: "a", role: "user", content: "x", matchedBy: "text" }]);
  });
});
