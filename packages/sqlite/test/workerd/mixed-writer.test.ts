import { describe, it } from "vitest";
import { type AgentsSqlHost, agentsDeletesThenWeReappend, agentsWritesAfterUs } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

/** An agents `Agent`'s synchronous tagged-template `sql`, over this object's `ctx.storage.sql`. */
function agentsHostOf(state: DurableObjectState): AgentsSqlHost {
  return {
    sql: ((strings: TemplateStringsArray, ...values: unknown[]) =>
      state.storage.sql.exec(strings.join("?"), ...values).toArray()) as AgentsSqlHost["sql"],
  };
}

describe("a lean database that agents@0.22.0 writes to after us (Durable Object)", () => {
  it("keeps every message and the right paths on the store that was open all along", async () => {
    await inObject("mixed-writer-paths", async (state) => {
      await agentsWritesAfterUs(
        sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" }),
        agentsHostOf(state),
      );
    });
  });

  it("refuses to re-append an id agents deleted while a stored message still names it (no cycle)", async () => {
    await inObject("mixed-writer-reappend", async (state) => {
      await agentsDeletesThenWeReappend(
        sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" }),
        agentsHostOf(state),
      );
    });
  });
});
