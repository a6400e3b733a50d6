import { Session, type SessionMessage } from "@contextblocks/sessions";
import { MessageTree } from "@contextblocks/sessions/store-kit";
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

// A budgeted history is planned on the sizes a path read without content carries (`octet_length` of the
// stored JSON), then only the window's content is read.
describe("budgeted history on PostgresSessionStore", () => {
  it("a path read without content carries each stored size; Session.history cuts exactly by them", async () => {
    const pool = schema.pool();
    const store = new PostgresSessionStore(pool, "budget");
    const tree = new MessageTree(store);
    const ids = ["u0", "a1", "u2", "a3", "u4", "a5"]; // all the same size
    for (const id of ids) await tree.appendMessage(text(id, `message ${id} `.repeat(10)));
    const size = JSON.stringify(await tree.getMessage("u0")).length;

    const path = await store.readPath(undefined, { limit: 100, content: false });
    expect(path.map((record) => [record.id, record.bytes, record.content])).toEqual(
      ids.map((id) => [id, size, undefined]),
    );
    expect((await store.readPath("a3", { limit: 2, content: true })).map((record) => record.id)).toEqual([
      "u2",
      "a3",
    ]);

    const session = new Session({ store });
    const cut = await session.history({ maxBytes: 2 * size });
    expect({ ids: cut.messages.map((message) => message.id), truncated: cut.truncated }).toEqual({
      ids: ["u0", "a1"],
      truncated: true,
    });
    const leafFirst = await session.history({ maxBytes: 2 * size, newestFirst: true });
    expect(leafFirst.messages.map((message) => message.id)).toEqual(["a5", "u4"]);
    const window = await tree.getRecentHistory(undefined, 2 * size);
    expect({ ids: window.messages.map((message) => message.id), truncated: window.truncated }).toEqual({
      ids: ["u4", "a5"],
      truncated: true,
    });
  });
});
