import { describe, expect, it } from "vitest";
import { InMemoryKeyValueNamespace, WriteQueue, writeQueueFor } from "../src/index.js";

describe("WriteQueue", () => {
  it("runs writes one at a time, in the order given, and a failed write does not stop the next", async () => {
    const queue = new WriteQueue();
    const events: string[] = [];
    const write = (name: string, fail = false) =>
      queue.run(async () => {
        events.push(`${name} start`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`${name} end`);
        if (fail) throw new Error(`${name} failed`);
        return name;
      });
    const results = await Promise.allSettled([write("a"), write("b", true), write("c")]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(events).toEqual(["a start", "a end", "b start", "b end", "c start", "c end"]);
  });

  it("is one queue per database, shared by every store opened on it", () => {
    const database = new InMemoryKeyValueNamespace();
    expect(writeQueueFor(database)).toBe(writeQueueFor(database));
    expect(writeQueueFor(database)).not.toBe(writeQueueFor(new InMemoryKeyValueNamespace()));
  });
});
