import { describe, expect, it, vi } from "vitest";
import { createTables } from "../src/index.js";
import { createSchema } from "./database.js";
import { earlierDatabase, earlierSchemas } from "./earlier-schemas.js";
import { postgresTree } from "./message-tree.js";

describe("the session migration module", () => {
  it("is loaded only when the version marker is missing or older, never to open current tables", async () => {
    const schema = await createSchema();
    try {
      const current = await schema.client();
      await createTables(current);
      let loads = 0;
      vi.doMock("../src/session-migration.js", async () => {
        loads++;
        return vi.importActual("../src/session-migration.js");
      });
      const store = postgresTree(current, "chat");
      await store.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
      expect(await store.getPathLength()).toBe(1);
      expect(loads).toBe(0);
      const other = await createSchema();
      try {
        const old = await other.client();
        for (const statement of earlierDatabase(earlierSchemas[1]!))
          await old.query(statement.text, statement.values);
        expect(await postgresTree(old, "chat").getPathLength()).toBe(3);
        expect(loads).toBe(1);
      } finally {
        await other.drop();
      }
    } finally {
      await schema.drop();
    }
  });
});
