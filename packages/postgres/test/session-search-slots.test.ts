import type { SessionMessage } from "@contextblocks/sessions";
import { fromPg } from "@contextblocks/sql";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchMessageRows } from "../src/message-search.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";
import { recordStatements } from "./recorded-statements.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

async function writeSession(client: pg.Client): Promise<void> {
  const tree = postgresTree(client, "chat");
  // Each a root: no message holds another's words among the turns before it.
  await tree.appendMessage(message("lighthouse", "We walked to the lighthouse."), null);
  await tree.appendMessage(message("beach", "The beach was cold, and the sunset late."), null);
  await tree.appendMessage(message("other", "Nothing to see here."), null);
}

// A search's term queries (its terms, then its adjacent pairs) are padded with empty ones to the next of a few
// counts, so the statement's text, a named prepared statement on each connection, depends on that count alone.
describe("PostgresSessionStore search: term queries padded to a few counts", () => {
  it("sends one statement text for queries of different counts of terms and pairs in one size", async () => {
    const client = await schema.client();
    await writeSession(client);
    const tree = postgresTree(client, "chat");
    const sent = recordStatements(client);
    // Three terms and two pairs; six terms and no pair (a stopword between each two): six slots each.
    expect((await tree.searchMessages("lighthouse beach sunset", 10)).length).toBeGreaterThan(0);
    expect(
      (await tree.searchMessages("lighthouse and beach and sunset and cold and walk and see", 10)).length,
    ).toBeGreaterThan(0);
    const searches = sent.filter((statement) => statement.text.startsWith("WITH search_queries"));
    expect(searches).toHaveLength(2);
    expect(searches[0]?.text).toBe(searches[1]?.text);
  });

  it("an empty slot finds nothing, adds nothing to a score and raises no notice", async () => {
    const client = await schema.client();
    await writeSession(client);
    const notices: string[] = [];
    client.on("notice", (notice) => notices.push(notice.message ?? ""));
    const search = (query: string) =>
      searchMessageRows((statement) => fromPg(client).run(statement), query, 10, "chat");
    // One term: one slot, none empty. Three terms (two no message holds) and two pairs: five slots and one empty.
    const alone = await search("lighthouse");
    const padded = await search("lighthouse zebra quokka");
    expect(padded.map((row) => row.id)).toEqual(["lighthouse"]);
    expect(padded.map((row) => row.relevance)).toEqual(alone.map((row) => row.relevance));
    expect(notices).toEqual([]);
  });
});
