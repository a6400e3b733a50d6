import type { ContextProvider, WritableContextProvider } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { expect } from "vitest";
import { expectSameText } from "./compare.js";
import { DEFAULT_LARGE_CONTENT_SIZE } from "./options.js";
import { startConcurrently } from "./scheduling.js";
import { check, concurrencyCheck, group, needsReopen, type Suite } from "./suite.js";
import { concurrentValue, largeText, ROUND_TRIP_TEXTS } from "./texts.js";
import { isPromiseLike } from "./values.js";

type Writable = ContextProvider & WritableContextProvider;

/**
 * Writable (whole-block `set(content)`): round trips of awkward content, overwrite, durability across a
 * simulated restart, and concurrent writes that end with one complete value.
 */
export function writableGroup<P extends ContextProvider>(suite: Suite<P>): void {
  const enabled = suite.kind === "writable";
  const writers = suite.writers;
  const largeSize = suite.options.largeContentSize ?? DEFAULT_LARGE_CONTENT_SIZE;

  group("writable", suite, enabled, (fixture) => {
    const open = async (label = "notes") => (await fixture.create(label)) as P & Writable;
    const reopen = async (provider: P, label = "notes") =>
      (await fixture.reopen(provider, label)) as P & Writable;

    /** Writes `content`, then reads it back from the same instance and, with reopen, from a new one. */
    async function roundTrip(content: string): Promise<void> {
      const provider = await open();
      const pending = provider.set(content);
      expect(isPromiseLike(pending), "set() returns a promise").toBe(true);
      await pending;
      expectSameText(await provider.get(), content, "get() after set()");
      if (suite.options.reopen) {
        expectSameText(await (await reopen(provider)).get(), content, "get() on a reopened instance");
      }
    }

    check(suite, "get() is null or empty before the first write", null, async () => {
      const value = await (await open()).get();
      expect(value === null || value === "", `a fresh block's get() returned ${describeValue(value)}`).toBe(
        true,
      );
    });

    for (const text of ROUND_TRIP_TEXTS) {
      check(suite, `set then get returns ${text.name} unchanged`, null, () => roundTrip(text.content));
    }

    check(suite, `set then get returns long content (${largeSize} characters) unchanged`, null, () =>
      roundTrip(largeText(largeSize)),
    );

    check(suite, "set replaces the whole content: longer, then shorter, then empty", null, async () => {
      const provider = await open();
      await provider.set(largeText(20_000));
      await provider.set("short");
      expectSameText(await provider.get(), "short", "get() after overwriting long content with short");
      await provider.set("");
      expectSameText(await provider.get(), "", "get() after overwriting with an empty string");
      if (suite.options.reopen) {
        await provider.set("final value");
        expectSameText(await (await reopen(provider)).get(), "final value", "get() on a reopened instance");
      }
    });

    check(
      suite,
      "a fresh instance on the same backing store reads what an earlier one wrote",
      needsReopen(suite),
      async () => {
        const first = await open();
        await first.set("written by the first instance");
        const second = await reopen(first);
        expectSameText(await second.get(), "written by the first instance", "a reopened instance's get()");
        await second.set("written by the second instance");
        const third = await reopen(second);
        expectSameText(await third.get(), "written by the second instance", "a third instance's get()");
      },
    );

    check(
      suite,
      "an instance that read the block reads a value another instance wrote since (no read cache)",
      needsReopen(suite),
      async () => {
        // Two Workers (or a Worker and a cron) share one store: `refreshSystemPrompt()` and a cold start's
        // drift check must see the other's write, not the value this instance read first.
        const reader = await open();
        await reader.set("written by the reader");
        expectSameText(await reader.get(), "written by the reader", "the reader's own get()");
        const writer = await reopen(reader);
        await writer.set("written by another instance");
        expectSameText(
          await reader.get(),
          "written by another instance",
          "get() on an instance that read before another instance wrote",
        );
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent sets end with one of the written values, whole`,
      null,
      async () => {
        for (const schedule of suite.schedules) {
          const provider = await open();
          const values = Array.from({ length: writers }, (_, writer) => concurrentValue(writer, 16_384));
          await startConcurrently(writers, schedule, (index) => provider.set(values[index] as string));
          const final = await provider.get();
          expectOneOf(final, values, `get() after concurrent sets (${schedule.name})`);
          if (suite.options.reopen) {
            expectSameText(await (await reopen(provider)).get(), final ?? "", `reopened (${schedule.name})`);
          }
        }
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent sets from two instances on one store end with one written value`,
      needsReopen(suite),
      async () => {
        for (const schedule of suite.schedules) {
          const first = await open();
          const second = await reopen(first);
          const values = Array.from({ length: writers }, (_, writer) => concurrentValue(writer, 16_384));
          await startConcurrently(writers, schedule, (index) =>
            (index % 2 === 0 ? first : second).set(values[index] as string),
          );
          expectOneOf(
            await (await reopen(first)).get(),
            values,
            `get() on a new instance after concurrent sets (${schedule.name})`,
          );
        }
      },
    );

    concurrencyCheck(
      suite,
      `${writers} concurrent sets to different labels on one store all land`,
      needsReopen(suite),
      async (test) => {
        test.skip(typeof (await open("label-0")).init !== "function", "the provider has no init(label)");
        for (const schedule of suite.schedules) {
          const base = await open("label-0");
          const providers = [base];
          for (let index = 1; index < writers; index++) providers.push(await reopen(base, `label-${index}`));
          await startConcurrently(writers, schedule, (index) =>
            (providers[index] as P & Writable).set(concurrentValue(index)),
          );
          for (let index = 0; index < writers; index++) {
            const reader = await reopen(base, `label-${index}`);
            expectSameText(
              await reader.get(),
              concurrentValue(index),
              `label-${index} after concurrent sets (${schedule.name})`,
            );
          }
        }
      },
    );
  });
}

function expectOneOf(value: string | null, values: readonly string[], what: string): void {
  if (value !== null && values.includes(value)) return;
  const described =
    value === null
      ? "null (the writes were lost)"
      : `${value.length} characters starting ${JSON.stringify(value.slice(0, 24))}, not any one written value (a mix or a corruption)`;
  expect.fail(`${what}: got ${described}`);
}
