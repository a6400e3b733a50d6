import { expect } from "vitest";

/**
 * Asserts two texts are identical without printing megabytes on failure: the message gives the lengths,
 * the first differing position and a short excerpt of each side there.
 */
export function expectSameText(actual: unknown, expected: string, what: string): void {
  if (actual === expected) return;
  expect.fail(`${what}: ${describeDifference(actual, expected)}`);
}

export function describeDifference(actual: unknown, expected: string): string {
  if (typeof actual !== "string") {
    return `expected a string of ${expected.length} characters, got ${actual === null ? "null" : typeof actual}`;
  }
  let index = 0;
  while (index < actual.length && index < expected.length && actual[index] === expected[index]) index++;
  const excerpt = (text: string) => JSON.stringify(text.slice(Math.max(0, index - 20), index + 40));
  return (
    `expected ${expected.length} characters, got ${actual.length}; first difference at ${index}: ` +
    `expected …${excerpt(expected)}…, got …${excerpt(actual)}…`
  );
}
