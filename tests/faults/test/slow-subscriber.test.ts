import { beforeAll, describe, expect, it } from "vitest";
import { type SlowSubscriberResult, slowSubscriber } from "../src/slow-subscriber.js";

const mebibyte = 1024 * 1024;

describe("an inspector subscriber that never reads while a session takes 16 appends of 1 MiB", () => {
  let result: SlowSubscriberResult;
  beforeAll(async () => {
    result = await slowSubscriber({ appends: 16 });
  });

  it("changes nothing the session stores, and its memory goes once its stream is cancelled", () => {
    expect(result.figures.examples.filter((example) => example.startsWith("storage"))).toEqual([]);
    expect(result.heldAfterCancel).toBeLessThan(4 * mebibyte);
  });

  // A subscriber's events are views (ids and sizes) in a buffer bounded by `eventBufferBytes` (1 MiB).
  it("holds at most 8 MiB", () => {
    expect(result.heldBySubscriber).toBeLessThanOrEqual(8 * mebibyte);
  });
});
