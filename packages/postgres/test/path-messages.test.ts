import { Session, type SessionMessage } from "@contextblocks/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";

function text(id: string, words: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text: words }] };
}

let schema: TestSchema;
beforeAll(async () => {
  schema = await createSchema();
});
afterAll(async () => {
  await schema.drop();
});

// getPathMessages applies the byte budget in SQL: rows past the first one over it are not returned.
describe("PostgresSessionStore.getPathMessages", () => {
  it("applies a root-first or leaf-first byte budget in the statement; Session.history cuts exactly", async () => {
    const pool = schema.pool();
    const store = new PostgresSessionStore(pool, "budget");
    const ids = ["u0", "a1", "u2", "a3", "u4", "a5"]; // all the same size
    for (const id of ids) await store.appendMessage(text(id, `message ${id} `.repeat(10)));
    const size = JSON.stringify(await store.getMessage("u0")).length;

    const oldest = await store.getPathMessages(undefined, { maxBytes: 2 * size });
    expect({ ids: oldest.messages.map((message) => message.id), truncated: oldest.truncated }).toEqual({
      ids: ["u0", "a1", "u2"],
      truncated: true,
    });
    const newest = await store.getPathMessages(undefined, { maxBytes: 2 * size, newestFirst: true });
    expect({ ids: newest.messages.map((message) => message.id), truncated: newest.truncated }).toEqual({
      ids: ["a3", "u4", "a5"],
      truncated: true,
    });
    expect(await store.getPathMessages(undefined, { maxBytes: 100 * size })).toEqual({
      messages: await store.getHistory(),
      truncated: false,
    });

    const session = new Session({ store });
    const cut = await session.history({ maxBytes: 2 * size });
    expect({ ids: cut.messages.map((message) => message.id), truncated: cut.truncated }).toEqual({
      ids: ["u0", "a1"],
      truncated: true,
    });
    const leafFirst = await session.history({ maxBytes: 2 * size, newestFirst: true });
    expect(leafFirst.messages.map((message) => message.id)).toEqual(["a5", "u4"]);
  });
});
