import { ContextBlocks, type ContextError, isContextError } from "@contextblocks/core";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresContextProvider, PostgresSearchProvider } from "../src/index.js";
import { createSchema, postgresUrl, type TestSchema } from "./database.js";

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

const keysOf = (result: string | null) =>
  [...(result ?? "").matchAll(/^\[([^\]\n]*)\]$/gm)].map((match) => match[1]);

describe("PostgresSearchProvider", () => {
  it("reads tsquery operators in a query as words, never as syntax", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-smoothie", "A mango and papaya smoothie, not too sweet.");
    await search.set("kb-pantry", "Rice, beans and lentils.");
    for (const query of [
      "mango & !papaya",
      "mango <-> papaya",
      "mango:*",
      "!(papaya)",
      "'mango' | 'x'",
      "mango\\",
    ]) {
      expect(keysOf(await search.search(query)), query).toEqual(["kb-smoothie"]);
    }
    expect(await search.search("!&|<->():*")).toBeNull();
    expect(await search.search("mang:*")).toBeNull();
  });

  it("finds an answer to a question whose words are not all in it, and ranks the rarer term first", async () => {
    const search = new PostgresSearchProvider(await schema.client(), { label: "knowledge", limit: 3 });
    await search.set("kb-allergy", "Mia is allergic to peanuts and always carries an epinephrine pen.");
    await search.set("kb-menu", "The cafeteria menu lists the foods served this week.");
    for (const [key, text] of [
      ["kb-bedroom", "The bedroom window sticks."],
      ["kb-garage", "The garage window faces the orchard."],
      ["kb-quartz", "The quartz countertop needs resealing."],
    ]) {
      await search.set(key as string, text as string);
    }
    expect(keysOf(await search.search("What is Mia allergic to?"))[0]).toBe("kb-allergy");
    expect(keysOf(await search.search("quartz window"))[0]).toBe("kb-quartz");
    expect(keysOf(await search.search("window"))).toHaveLength(2);
  });

  it("among many entries equal on phrase, coverage and pairs, returns the densest first and in key order after it", async () => {
    const search = new PostgresSearchProvider(await schema.client(), { label: "knowledge", limit: 3 });
    // Twenty entries hold "harbour" once (tied for coverage); the densest is written last, so a search that
    // cut the tied matches before weighing their density would leave it out.
    for (let index = 0; index < 20; index++) {
      await search.set(
        `kb-${String(index).padStart(2, "0")}`,
        `Note ${index}: the boats left the harbour at dawn.`,
      );
    }
    await search.set("kb-zz", "Harbour harbour harbour.");
    expect(keysOf(await search.search("harbour"))).toEqual(["kb-zz", "kb-00", "kb-01"]);
    // The same with a second, rarer term: its entry first, then the tied entries holding "harbour" alone,
    // ranked against the term they hold, densest first.
    await search.set("kb-light", "The lighthouse keeper.");
    expect(keysOf(await search.search("harbour lighthouse"))).toEqual(["kb-light", "kb-zz", "kb-00"]);
  });

  it("counts a pair whose other word is a Postgres stopword as the word Postgres keeps", async () => {
    const search = new PostgresSearchProvider(await schema.client(), { label: "knowledge", limit: 2 });
    // A query of only stopwords searches for them all; Postgres drops "who" but keeps "could" and "must",
    // so the pair "who could" is 'could' alone and holds for the entry with "could", though none holds
    // "who". The two entries tie on coverage (each holds one term, as often as the other its own).
    await search.set("kb-1", "We must.");
    await search.set("kb-2", "We could.");
    expect(keysOf(await search.search("who could must"))).toEqual(["kb-2", "kb-1"]);
  });

  it("ranks by cover density over the whole query when Postgres cuts a query word into several lexemes", async () => {
    // In a database whose locale is C.UTF-8, Postgres's parser cuts "alpha²beta" into 'alpha' & 'beta' (the
    // throwaway cluster's own C locale keeps it whole): a cover then spans positions, and a lexeme of a term
    // the entry does not hold ("gamma", of "gamma³delta") inside it counts, so the entry holding it is denser.
    const admin = await schema.client();
    const database = `search_${schema.name}`;
    await admin.query(`CREATE DATABASE ${database} LOCALE 'C.UTF-8' TEMPLATE template0`);
    const url = new URL(postgresUrl());
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      const search = new PostgresSearchProvider(client, "knowledge");
      await search.set("kb-a", "alpha omega beta");
      await search.set("kb-b", "alpha gamma beta");
      expect(keysOf(await search.search("alpha²beta gamma³delta"))).toEqual(["kb-b", "kb-a"]);
    } finally {
      await client.end();
      await admin.query(`DROP DATABASE ${database}`);
    }
  });

  it("ranks the exact phrase first among many denser entries holding every term, a key's terms counted", async () => {
    const client = await schema.client();
    const search = new PostgresSearchProvider(client, { label: "knowledge", limit: 3 });
    // Twenty entries hold both words twice, never as the query's phrase (denser than the one that does): all
    // tie on coverage with it, so the phrase must be looked for among more rows than the limit.
    for (let index = 0; index < 20; index++) {
      await search.set(
        `kb-${String(index).padStart(2, "0")}`,
        `Note ${index}: boats harbour, then boats harbour.`,
      );
    }
    await search.set("kb-zz", "The old harbour boats.");
    await search.set("boats-log", "Harbour dues were paid.");
    for (let index = 0; index < 5; index++) await search.set(`kb-one-${index}`, "Only the harbour.");
    const found = keysOf(await search.search("harbour boats"));
    expect(found).toHaveLength(3);
    expect(found[0]).toBe("kb-zz");
    expect(found.filter((key) => key?.startsWith("kb-one-"))).toEqual([]);
    // A word of the key counts for coverage: the entry whose key holds "boats" outranks those holding one word.
    const all = keysOf(
      await new PostgresSearchProvider(client, { label: "knowledge", limit: 30 }).search("harbour boats"),
    );
    expect(all).toHaveLength(27);
    expect(all.indexOf("boats-log")).toBeLessThan(all.indexOf("kb-one-0"));
    expect(all.slice(-5).every((key) => key?.startsWith("kb-one-"))).toBe(true);
  });

  it("ranks the same on every run, past the runs after which Postgres may keep one plan for the statement", async () => {
    // The statement is a named prepared statement: after five runs Postgres may plan it once without its
    // values (the limit is in its text). Two limits, two statements; each must keep its order on every run.
    const client = await schema.client();
    const three = new PostgresSearchProvider(client, { label: "knowledge", limit: 3 });
    for (let index = 0; index < 12; index++) {
      await three.set(`kb-${String(index).padStart(2, "0")}`, `Note ${index}: the ferry left the pier.`);
    }
    await three.set("kb-zz", "Ferry ferry pier ferry.");
    await three.set("kb-lamp", "The lamp by the pier.");
    const five = new PostgresSearchProvider(client, { label: "knowledge", limit: 5 });
    for (let run = 0; run < 8; run++) {
      // The rare "lamp" first; then the densest of the entries tied on coverage, then the rest in key order.
      expect(keysOf(await three.search("ferry pier lamp")), `run ${run}`).toEqual([
        "kb-lamp",
        "kb-zz",
        "kb-00",
      ]);
      expect(keysOf(await five.search("ferry pier lamp")), `run ${run}`).toEqual([
        "kb-lamp",
        "kb-zz",
        "kb-00",
        "kb-01",
        "kb-02",
      ]);
    }
  });

  it("refuses a limit that is not a positive safe integer, naming it", async () => {
    const client = await schema.client();
    for (const limit of [0, 2.5, 2 ** 53, Number.POSITIVE_INFINITY]) {
      expect(() => new PostgresSearchProvider(client, { label: "knowledge", limit }), String(limit)).toThrow(
        /limit must be a positive integer/,
      );
    }
  });

  it("finds an entry by the words of its key", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("ferry-timetable", "Leaves at nine, returns before dusk.");
    expect(keysOf(await search.search("timetable"))).toEqual(["ferry-timetable"]);
    const contentOnly = new PostgresSearchProvider(await schema.client(), {
      label: "knowledge",
      searchKeys: false,
    });
    expect(await contentOnly.search("timetable")).toBeNull();
  });

  it("refuses text Postgres cannot store unchanged, and keeps what was stored", async () => {
    const search = new PostgresSearchProvider(await schema.client(), "knowledge");
    await search.set("kb-kept", "kept text");
    for (const [key, content] of [
      ["kb-kept", "nul \u0000 inside"],
      ["kb-kept", "lone \ud800 surrogate"],
      ["kb-\u0000", "fine"],
    ] as const) {
      const error = await search.set(key, content).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isContextError(error)).toBe(true);
      expect((error as ContextError).code).toBe("INVALID_INPUT");
    }
    expect(await search.search("kept")).toBe("[kb-kept]\nkept text");
    expect(await search.get()).toBe("1 entries indexed.");
  });

  it("serves ContextBlocks with a Postgres prompt store, as Cloudflare agents' Sessions API wires it", async () => {
    const open = (client: pg.Client) =>
      new ContextBlocks(
        [
          { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
          {
            label: "memory",
            description: "Short facts",
            maxTokens: 1100,
            provider: new PostgresContextProvider(client, "memory_s1"),
          },
          {
            label: "knowledge",
            description: "Searchable knowledge base",
            provider: new PostgresSearchProvider(client),
          },
        ],
        new PostgresContextProvider(client, "_prompt_s1"),
      );
    const context = open(await schema.client());
    await context.setBlock("memory", "The user likes tea.");
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("The user likes tea.");
    // A cold start on another connection serves the stored prompt byte for byte.
    expect(await open(await schema.client()).freezeSystemPrompt()).toBe(prompt);
  });
});
