import { fromPg } from "@contextblocks/sql";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createTables } from "../src/index.js";
import { createSchema } from "./database.js";
import { earlierDatabase, earlierSchemas } from "./earlier-schemas.js";
import { postgresTree } from "./message-tree.js";

/** Statements that change the schema: what the migration runs and opening current tables must not. */
const schemaChange = /\b(CREATE|ALTER|DROP)\s+(TABLE|INDEX|UNIQUE|EXTENSION)\b/i;

describe("the session migration", () => {
  it("runs only when the version marker is missing or older, never to open current tables", async () => {
    const schema = await createSchema();
    const other = await createSchema();
    try {
      const current = await schema.client();
      await createTables(current);
      const seen: string[] = [];
      const counted = (client: pg.Client) => fromPg(client, { onStatement: ({ text }) => seen.push(text) });
      const store = postgresTree(counted(current), "chat");
      await store.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
      expect(await store.getPathLength()).toBe(1);
      expect(seen.filter((text) => schemaChange.test(text))).toEqual([]);
      const old = await other.client();
      for (const statement of earlierDatabase(earlierSchemas[1]!))
        await old.query(statement.text, statement.values);
      seen.length = 0;
      expect(await postgresTree(counted(old), "chat").getPathLength()).toBe(3);
      expect(seen.filter((text) => schemaChange.test(text)).length).toBeGreaterThan(0);
    } finally {
      await other.drop();
      await schema.drop();
    }
  });
});
