import { expect } from "vitest";
import { DEFAULT_LARGE_PART_SIZE, type SessionStoreUnderTest } from "./session-options.js";
import { type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";
import { ROUND_TRIP_TEXTS } from "./texts.js";

/** Parts come back exactly as appended: awkward text, unknown part types and fields, large parts. */
export function sessionContentGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const size = suite.options.largePartSize ?? DEFAULT_LARGE_PART_SIZE;
  sessionGroup("content", suite, null, (fixture, test) => {
    for (const text of ROUND_TRIP_TEXTS) {
      test(`a text part with ${text.name} comes back unchanged`, async () => {
        const store = await fixture.create();
        await store.appendMessage(textMessage("m", text.content));
        expect((await store.getMessage("m"))?.parts[0]?.text).toBe(text.content);
        expect((await store.getHistory())[0]?.parts[0]?.text).toBe(text.content);
      });
    }

    test("tool parts with nested input and output and unknown fields come back unchanged", async () => {
      const store = await fixture.create();
      const message = {
        id: "tool",
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-lookup",
            toolCallId: "call-1",
            state: "output-available",
            input: { query: "x", nested: [1, { deep: null }] },
            output: { rows: ["a", "b"], "weird key\u0000": true },
            providerMetadata: { cache: { hit: 3 } },
          },
        ],
      };
      await store.appendMessage(message);
      expect(await store.getMessage("tool")).toEqual(message);
    });

    test(`a text part of ${size} characters comes back unchanged`, async () => {
      const store = await fixture.create();
      const large = "0123456789abcdef".repeat(Math.ceil(size / 16)).slice(0, size);
      await store.appendMessage(textMessage("large", large));
      await store.appendMessage(textMessage("after", "small"));
      expect((await store.getMessage("large"))?.parts[0]?.text).toBe(large);
      expect((await store.getHistory())[0]?.parts[0]?.text).toBe(large);
    });
  });
}
