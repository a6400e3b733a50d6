import type { SessionMessage } from "@contextblocks/sessions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresSearchProvider } from "../src/index.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree } from "./message-tree.js";

// Postgres' parser keeps an e-mail address, a host name, a URL, a path or a version number whole (one lexeme),
// where the query's terms are their letters and digits: a search asks for each such word as written too.

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const keysOf = (result: string | null) =>
  [...(result ?? "").matchAll(/^\[([^\]\n]*)\]$/gm)].map((match) => match[1]).sort();

describe("addresses, hosts, URLs, paths and versions in a query", () => {
  it("find the messages that hold them", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("mail", "Write to john@example.com about the invoice."));
    await store.appendMessage(message("ok", "Will do.", "assistant"));
    await store.appendMessage(message("link", "The guide is at docs.example.com/setup, step three."));
    await store.appendMessage(message("thanks", "Thanks!", "assistant"));
    await store.appendMessage(message("version", "We pinned node-postgres 8.23.1 last week."));
    await store.appendMessage(message("other", "Nothing to see here.", "assistant"));
    await store.appendMessage(message("covid", "The COVID-19 rules changed in March."));
    await store.appendMessage(message("after", "Good to know.", "assistant"));
    const own = async (query: string) =>
      (await store.searchMessages(query, 10)).filter((hit) => hit.matchedBy === "text").map((hit) => hit.id);
    expect(await own("what is john@example.com?")).toEqual(["mail"]);
    expect(await own("docs.example.com/setup")).toEqual(["link"]);
    expect(await own("which version, 8.23.1?")).toEqual(["version"]);
    expect(await own("covid-19 rules")).toEqual(["covid"]);
  });

  it("find the knowledge entries that hold them", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-mail", "Support answers at help@example.org within a day.");
    await search.set("kb-host", "The status page lives at status.example.org.");
    await search.set("kb-other", "Opening hours are nine to five.");
    expect(keysOf(await search.search("help@example.org"))).toEqual(["kb-mail"]);
    expect(keysOf(await search.search("status.example.org"))).toEqual(["kb-host"]);
  });
});
