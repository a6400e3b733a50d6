import { describe, expect, it } from "vitest";
import { asksWhen, datePatterns, mentionsDate, planQuery } from "../src/index.js";

describe("asksWhen: a question that asks for a time", () => {
  it("reads when, how long and what year or month, wherever they stand", () => {
    expect(asksWhen("When did Maria meet Jean?")).toBe(true);
    expect(asksWhen("and when was that?")).toBe(true);
    expect(asksWhen("How long has Nate had his turtles?")).toBe(true);
    expect(asksWhen("Which year did they move?")).toBe(true);
    expect(asksWhen("what month is the race")).toBe(true);
  });

  it("is false for other questions, and for the words inside others", () => {
    expect(asksWhen("Where did Joanna travel?")).toBe(false);
    expect(asksWhen("How often does John work out?")).toBe(false);
    expect(asksWhen("What kind of art does Caroline make?")).toBe(false);
    expect(asksWhen("whenever you like")).toBe(false);
    expect(asksWhen("")).toBe(false);
  });

  it("is carried by the query plan, so every store reads the same answer", () => {
    expect(planQuery("When did Melanie paint a sunrise?")?.asksWhen).toBe(true);
    expect(planQuery("Melanie paint sunrise")?.asksWhen).toBe(false);
  });
});

describe("mentionsDate: a text that says when", () => {
  it("finds relative days, weeks, weekdays and months at a word's start", () => {
    expect(mentionsDate("Maria: something not so great happened yesterday...")).toBe(true);
    expect(mentionsDate("I went camping two weekends ago")).toBe(true);
    expect(mentionsDate("Last Friday I went to a council meeting")).toBe(true);
    expect(mentionsDate("We met in September")).toBe(true);
    expect(mentionsDate("Tomorrow is the grand opening")).toBe(true);
  });

  it("does not find them inside other words, nor the month that is a verb", () => {
    expect(mentionsDate("I was in Chicago, it was awesome")).toBe(false);
    expect(mentionsDate("You may like this painting")).toBe(false);
    expect(mentionsDate("Thanks, that means a lot")).toBe(false);
  });

  it("matches what a LIKE over the patterns matches: each a word after a space, lower case", () => {
    for (const pattern of datePatterns) {
      expect(pattern).toMatch(/^% [a-z ]+%$/);
      expect(mentionsDate(pattern.slice(2, -1).toUpperCase())).toBe(true);
    }
  });
});
