import { SessionBuilder } from "@contextblocks/sessions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresContextProvider, PostgresSearchProvider, postgresBackend } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

/** Text Postgres cannot compress below a B-tree entry's 2,704 bytes: each character drawn at random. */
function incompressible(characters: number, seed: number): string {
  let state = seed;
  let text = "";
  for (let index = 0; index < characters; index++) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    text += String.fromCharCode(0x4e00 + (state % 20_000));
  }
  return text;
}

describe("a value too long for a Postgres index", () => {
  it("refuses a message whose session id and id outgrow the primary key by name, and stores nothing", async () => {
    const client = await schema.client();
    // 1,000 characters is within a message id's limit; as CJK text at random it is 3,000 bytes.
    const id = incompressible(1_000, 7);
    const session = new SessionBuilder(postgresBackend(client)).forSession("s").build();
    await expect(
      session.appendMessage({ id, role: "user", parts: [{ type: "text", text: "the tide" }] }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(/too long for its index.*assistant_messages_pkey/),
    });
    expect(await session.getHistory()).toEqual([]);
    // The session goes on with an id that fits.
    await session.appendMessage({ id: "short", role: "user", parts: [{ type: "text", text: "the tide" }] });
    expect((await session.getHistory()).map((message) => message.id)).toEqual(["short"]);
  });

  it("refuses a session id too long for the session's index by name", async () => {
    const client = await schema.client();
    const session = new SessionBuilder(postgresBackend(client)).forSession(incompressible(1_200, 11)).build();
    await expect(
      session.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("session id or message id is too long"),
    });
  });

  it("refuses a block label and a search key too long for their indexes by name", async () => {
    const client = await schema.client();
    const label = incompressible(1_000, 13);
    const blocks = new PostgresContextProvider(client, label);
    await expect(blocks.set("remembered")).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("cf_agents_context_blocks_pkey"),
    });

    const search = new PostgresSearchProvider(client, "notes");
    await expect(search.set(incompressible(1_000, 17), "the tide")).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    // What was stored before is still there and still written to.
    await search.set("fits", "the tide turns");
    expect(await search.search("tide")).toBe("[fits]\nthe tide turns");
  });
});
