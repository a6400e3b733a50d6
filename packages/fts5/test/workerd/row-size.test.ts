import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { isContextError } from "@contextblocks/core";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import { expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";

it("on a Durable Object: an entry up to the limit is stored whole, one past it is refused by name", async () => {
  const stub = env.SEARCH_OBJECT.get(env.SEARCH_OBJECT.idFromName(crypto.randomUUID()));
  await runInDurableObject(stub, async (_instance, state) => {
    const provider = new Fts5SearchProvider(state.storage, { label: "docs" });
    const context = "Manual, chapter 1";
    // Varied words, so the index holds many terms, not one long position list.
    const words = Array.from({ length: maxRowBytes / 8 }, (_, index) => `w${index % 50_000}`.padEnd(7, "x"));
    const content = words.join(" ").slice(0, maxRowBytes - "manual".length - context.length);
    await provider.set("manual", content, { context });
    expect((await provider.search("w49999x"))?.startsWith("[manual]")).toBe(true);
    const error = await provider.set("manual", `${content}!`, { context }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    // Without the check this is SQLite's bare "string or blob too big: SQLITE_TOOBIG".
    expect(isContextError(error) && error.code === "INVALID_INPUT").toBe(true);
    expect((error as Error).message).toContain("is 2,000,001 bytes");
    expect(await provider.get()).toBe("1 entries indexed.");
  });
});
