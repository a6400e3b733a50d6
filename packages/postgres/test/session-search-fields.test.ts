import type { SessionMessage } from "@contextblocks/sessions";
import { fromPg } from "@contextblocks/sql";
import { datePatterns, dayWords } from "@contextblocks/text";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchMessageRows } from "../src/message-search.js";
import { createSchema, type TestSchema } from "./database.js";
import { postgresTree, type SearchableTree } from "./message-tree.js";

function message(id: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }], ...extra };
}

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

/** What a search shows: its hits and the turns beside them (near-matches come back as a hit's context). */
async function found(store: SearchableTree, query: string): Promise<string[]> {
  return (await store.searchMessages(query, 10))
    .flatMap((hit) => [hit.id, ...(hit.context ?? []).map((turn) => turn.id)])
    .sort();
}

describe("PostgresSessionStore search: the turns after a message, its day and its speaker", () => {
  it("finds a message by the day it carries, and returns its own text only", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(
      message("may", "We planted the tomatoes.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendMessage(
      message("june", "We picked the tomatoes.", { createdAt: new Date("2023-06-20T09:00:00Z") }),
    );
    const hits = await store.searchMessages("tomatoes in May 2023", 1);
    expect(hits.map((hit) => hit.id)).toEqual(["may"]);
    expect(hits[0]?.content).toBe("We planted the tomatoes.");
  });

  it("scores the day field for a month (its stem too) and a number", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(
      message("may", "We planted the tomatoes.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendMessage(
      message("june", "We picked the tomatoes.", { createdAt: new Date("2024-06-20T09:00:00Z") }),
    );
    const relevance = async (query: string) => {
      const rows = await searchMessageRows((statement) => fromPg(client).run(statement), query, 10, "chat");
      return Object.fromEntries(rows.map((row) => [row.id, Number(row.relevance)]));
    };
    // The texts tie on "tomatoes": the day field decides, by its month, its stem ("Junes") and its year.
    const may = await relevance("tomatoes in May");
    expect(may.may).toBeGreaterThan(may.june ?? 0);
    const june = await relevance("tomatoes of Junes past");
    expect(june.june).toBeGreaterThan(june.may ?? 0);
    const year = await relevance("tomatoes 2023");
    expect(year.may).toBeGreaterThan(year.june ?? 0);
  });

  it("a question that asks when ranks first the turn whose words say when, in any case, at a word's start", async () => {
    const store = postgresTree(await schema.client(), "chat");
    // Each matching turn after two others, so none lends another a share of its score and all have the same
    // turns before them (the same length).
    const turns = [
      ["filler-a", "Nothing else happened."],
      ["filler-b", "Nothing else happened."],
      ["dated", "We saw the parade YESTERDAY."],
      ["filler-1", "Nothing else happened."],
      ["filler-2", "Nothing else happened."],
      ["chicago", "We saw the parade in Chicago."],
      ["filler-3", "Nothing else happened."],
      ["filler-4", "Nothing else happened."],
      ["newest", "We saw the parade in Toronto."],
    ];
    for (const [id, text] of turns) await store.appendMessage(message(String(id), String(text)));
    const ids = async (query: string) =>
      (await store.searchMessages(query, 10)).map((hit) => hit.id).filter((id) => !id.startsWith("filler"));
    // "ago" inside "Chicago" does not say when; ties go to the newest turn.
    expect(await ids("When was the parade?")).toEqual(["dated", "newest", "chicago"]);
    expect(await ids("Which parade?")).toEqual(["newest", "chicago", "dated"]);
  });

  it("reads datePatterns as lower-case words after a space (the statement matches them as one expression)", () => {
    for (const pattern of datePatterns) expect(pattern).toMatch(/^% [a-z]+( [a-z]+)*%$/);
  });

  it("ranks the turns of the speaker a query names first (a 'Name:' label, or metadata.speaker)", async () => {
    const store = postgresTree(await schema.client(), "chat");
    // Two turns of small talk between them, so none ranks through another's text (the turns around it).
    await store.appendMessage(message("c", "Caroline: I went hiking last weekend."));
    await store.appendMessage(message("c1", "Nice."));
    await store.appendMessage(message("c2", "Yes."));
    await store.appendMessage(message("m", "Melanie: I went hiking last weekend."));
    await store.appendMessage(message("m1", "Nice."));
    await store.appendMessage(message("m2", "Yes."));
    await store.appendMessage(
      message("x", "I went hiking last weekend.", { metadata: { speaker: "Xavier" } }),
    );
    expect((await store.searchMessages("Where did Melanie go hiking?", 3))[0]?.id).toBe("m");
    expect((await store.searchMessages("Where did Xavier go hiking?", 3))[0]?.id).toBe("x");
  });

  it("a turn's later answer joins its context at the next search; an update or delete of the answer follows", async () => {
    const store = postgresTree(await schema.client(), "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    expect(await found(store, "agencies")).toEqual([]);
    await store.appendMessage(message("a", "Adoption agencies, mostly.", { role: "assistant" }));
    expect(await found(store, "agencies")).toEqual(["a", "q"]);
    await store.updateMessage(message("a", "Orchard soil, mostly.", { role: "assistant" }));
    expect(await found(store, "agencies")).toEqual([]);
    expect(await found(store, "orchard")).toEqual(["a", "q"]);
    await store.deleteMessages(["a"]);
    expect(await found(store, "orchard")).toEqual([]);
  });
});

describe("PostgresSessionStore search fields: written with the message", () => {
  interface FieldRow {
    id: string;
    speaker: string;
    time_text: string;
    search_state: number;
  }
  const fieldsOf = async (client: Awaited<ReturnType<TestSchema["client"]>>) =>
    (
      await client.query<FieldRow>(
        "SELECT id, speaker, time_text, search_state FROM assistant_messages ORDER BY position",
      )
    ).rows;

  it("an append writes each message's speaker and day: nothing is left for a search to catch up", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(
      message("dated", "Caroline: We planted the tomatoes.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendChain(
      [
        message("named", "I went hiking.", { metadata: { speaker: "Xavier" } }),
        message("plain", "nothing to say", { role: "assistant" }),
      ],
      "dated",
    );
    await store.importMessage(message("imported", "Melanie: Long ago."), "plain", "2021-12-31T23:30:00Z");
    expect(await fieldsOf(client)).toEqual([
      { id: "dated", speaker: "caroline", time_text: "8 May 2023", search_state: 2 },
      { id: "named", speaker: "xavier", time_text: dayWords(new Date()), search_state: 2 },
      { id: "plain", speaker: "assistant", time_text: dayWords(new Date()), search_state: 2 },
      { id: "imported", speaker: "melanie", time_text: "31 December 2021", search_state: 2 },
    ]);
  });

  it("a search whose fields are current is one statement; one with a message waiting for them catches up and searches again", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("tale", "A tale of tides."));
    const sql = fromPg(client);
    const statements: string[] = [];
    const read = (statement: Parameters<typeof sql.run>[0]) => {
      statements.push(statement.strings.join("?").trim().slice(0, 30));
      return sql.run(statement);
    };
    expect((await searchMessageRows(read, "tale", 10, "chat")).map((row) => row.id)).toEqual(["tale"]);
    expect(statements).toHaveLength(1);
    // Nothing found cannot say whether fields wait: the catch-up is asked (it finds none), nothing is searched again.
    statements.length = 0;
    expect(await searchMessageRows(read, "lighthouse", 10, "chat")).toEqual([]);
    expect(statements).toHaveLength(2);
    await store.importMessage(message("old", "An old tale."), null, "0500-03-01T00:00:00Z");
    statements.length = 0;
    const rows = await searchMessageRows(read, "tale", 10, "chat");
    expect(rows.map((row) => row.id).sort()).toEqual(["old", "tale"]);
    expect(statements.length).toBeGreaterThanOrEqual(3);
    expect((await fieldsOf(client)).every((row) => row.search_state === 2)).toBe(true);
  });

  it("a stored time outside the years 1000 to 9999 is left to the search, which writes its day", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.importMessage(message("old", "An old tale."), null, "0500-03-01T00:00:00Z");
    expect((await fieldsOf(client))[0]?.search_state).toBe(0);
    expect((await store.searchMessages("tale", 10)).map((hit) => hit.id)).toEqual(["old"]);
    expect(await fieldsOf(client)).toEqual([
      { id: "old", speaker: "user", time_text: dayWords("0500-03-01T00:00:00Z"), search_state: 2 },
    ]);
  });

  it("in a read-only transaction (a hot standby) a search finds a message still waiting for its fields, and writes nothing", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.importMessage(message("old", "An old tale."), null, "0500-03-01T00:00:00Z");
    await client.query("SET default_transaction_read_only = on");
    expect((await store.searchMessages("tale", 10)).map((hit) => hit.id)).toEqual(["old"]);
    expect((await fieldsOf(client))[0]?.search_state).toBe(0);
    // Any other failure of the catch-up is still the search's.
    await client.query("SET default_transaction_read_only = off");
    const refused = (statement: Parameters<ReturnType<typeof fromPg>["run"]>[0]) =>
      /^\s*UPDATE/.test(statement.strings[0] ?? "")
        ? Promise.reject(Object.assign(new Error("deadlock detected"), { code: "40P01" }))
        : fromPg(client).run(statement);
    await expect(searchMessageRows(refused, "tale", 10, "chat")).rejects.toMatchObject({ code: "40P01" });
    // A writer's search writes them.
    expect((await store.searchMessages("tale", 10)).map((hit) => hit.id)).toEqual(["old"]);
    expect((await fieldsOf(client))[0]?.search_state).toBe(2);
  });

  it("an update derives the speaker and the day again, in its own statement", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(message("turn", "Caroline: I went hiking last weekend."));
    await store.appendMessage(message("other", "Nice.", { role: "assistant" }));
    await store.updateMessage(
      message("turn", "Melanie: I went hiking last weekend.", {
        createdAt: new Date("2022-02-03T10:00:00Z"),
      }),
    );
    expect((await fieldsOf(client))[0]).toEqual({
      id: "turn",
      speaker: "melanie",
      time_text: "3 February 2022",
      search_state: 2,
    });
    // Without a time of its own, its day is its stored time's again.
    await store.updateMessage(message("turn", "Xavier: I went hiking."));
    expect((await fieldsOf(client))[0]).toEqual({
      id: "turn",
      speaker: "xavier",
      time_text: dayWords(new Date()),
      search_state: 2,
    });
    expect((await store.searchMessages("Where did Xavier go hiking?", 1))[0]?.id).toBe("turn");
  });

  it("rows an earlier release left without their fields are caught up by a search and ranked as before", async () => {
    const client = await schema.client();
    const store = postgresTree(client, "chat");
    await store.appendMessage(
      message("c", "Caroline: I went hiking last weekend.", { createdAt: new Date("2023-05-08T13:56:00Z") }),
    );
    await store.appendMessage(message("c1", "Nice."));
    await store.appendMessage(message("m", "Melanie: I went hiking yesterday."));
    await store.appendMessage(message("x", "I went hiking.", { metadata: { speaker: "Xavier" } }));
    const questions = ["Where did Melanie go hiking?", "When did Caroline go hiking in May 2023?", "Xavier"];
    const ranked = async () =>
      Promise.all(
        questions.map(async (question) =>
          ((await store.storage.search?.(question, 30)) ?? []).map((hit) => [
            hit.id,
            hit.score,
            hit.matchedBy,
          ]),
        ),
      );
    const before = await ranked();
    const written = await fieldsOf(client);
    // As an earlier release stored them: no speaker, no day, waiting for a search.
    await client.query("UPDATE assistant_messages SET speaker = '', time_text = '', search_state = 0");
    expect(await ranked()).toEqual(before);
    expect(await fieldsOf(client)).toEqual(written);
  });
});
