import { describe, expect, it } from "vitest";
import { keysOf, openProvider } from "../support/databases.js";

/** Natural-language questions find the entries that answer them even when most of their words are absent. */

const knowledge: [string, string][] = [
  ["morning-routine", "Dani has overnight oats with blueberries most mornings, plus a double espresso."],
  ["allergy", "Dani is allergic to penicillin; always tell the doctor."],
  ["commute", "Dani cycles to the office on a teal city bike."],
  ["sister", "Her younger sister Amara is a nurse in Manchester."],
  ["deploys", "Merging to main deploys to staging; production needs a manual approval in Argo CD."],
  ["database", "We chose PostgreSQL over DynamoDB for ad-hoc reporting queries."],
  ["oncall", "The on-call rotation hands over on Monday at 10:00."],
  ["jollof", "Jollof rice: blend tomatoes and peppers, fry the paste, add stock and steam the rice in it."],
  ["tea", "Green sencha: water at 75 degrees, steep for one minute."],
  ["rent", "Rent is 1,650 euros a month, paid on the first to the housing association."],
  ["passport", "Tobi's passport expires next spring and must be renewed at the town hall."],
  ["wifi", "The guest Wi-Fi password is on the fridge magnet."],
  ["migraine", "Migraines come about once a month; sumatriptan helps when taken early."],
  ["chess", "Dani plays rapid chess online; her rating is about 1650."],
];

const questions: [string, string][] = [
  ["What does Dani usually have in the morning?", "morning-routine"],
  ["Is she allergic to any medicine?", "allergy"],
  ["How does Dani get to the office every day?", "commute"],
  ["What does my sister do for work?", "sister"],
  ["how do I get a change deployed to production?", "deploys"],
  ["Why did we go with PostgreSQL and not another database?", "database"],
  ["When does the on-call handover happen?", "oncall"],
  ["What's the recipe for jollof?", "jollof"],
  ["How long should I steep green tea?", "tea"],
  ["How much is the rent and when is it due?", "rent"],
  ["When does Tobi's passport expire?", "passport"],
  ["What is the wifi password for guests?", "wifi"],
  ["What helps against my migraines?", "migraine"],
  ["what's my chess rating", "chess"],
];

describe("recall on natural-language questions", () => {
  it("each question finds its answer first, though most of the question's words are not in it", async () => {
    const { provider } = openProvider();
    for (const [key, content] of knowledge) await provider.set(key, content);
    const misses: string[] = [];
    for (const [question, key] of questions) {
      if (keysOf(await provider.search(question))[0] !== key) misses.push(question);
    }
    expect(misses).toEqual([]);
  });

  it("the same questions ANDed term by term (agents/context's query) find almost nothing", async () => {
    const { database } = openProvider();
    database.exec(`CREATE VIRTUAL TABLE cf_agents_search_fts
      USING fts5(label UNINDEXED, key UNINDEXED, content, tokenize='porter unicode61')`);
    const insert = database.prepare(
      "INSERT INTO cf_agents_search_fts (label, key, content) VALUES (?, ?, ?)",
    );
    for (const [key, content] of knowledge) insert.run("knowledge", key, content);
    const search = database.prepare(`SELECT f.key FROM cf_agents_search_fts f
      WHERE cf_agents_search_fts MATCH ? AND f.label = ? ORDER BY rank LIMIT 10`);
    let answered = 0;
    for (const [question, key] of questions) {
      const quoted = question
        .split(/\s+/)
        .filter(Boolean)
        .map((word) => `"${word.replaceAll('"', '""')}"`)
        .join(" ");
      const rows = search.all(quoted, "knowledge") as { key: string }[];
      if (rows.some((row) => row.key === key)) answered++;
    }
    expect(answered).toBeLessThanOrEqual(2);
  });

  it("finds other forms of a word (porter stemming) and words of the key", async () => {
    const { provider } = openProvider();
    await provider.set("user-breakfast-habits", "Overnight oats with blueberries.");
    await provider.set("running", "Dani runs five kilometres on Mondays.");
    expect(keysOf(await provider.search("what do I eat for breakfast?"))).toEqual(["user-breakfast-habits"]);
    expect(keysOf(await provider.search("when do I go running?"))).toEqual(["running"]);
  });

  it("searchKeys: false searches contents only", async () => {
    const { provider } = openProvider({ searchKeys: false });
    await provider.set("user-breakfast-habits", "Overnight oats with blueberries.");
    expect(await provider.search("breakfast")).toBeNull();
    expect(keysOf(await provider.search("blueberries"))).toEqual(["user-breakfast-habits"]);
  });
});

describe("ranking", () => {
  it("an exact phrase match comes first", async () => {
    const { provider } = openProvider();
    await provider.set("scattered", "Pizza from York, and a new branch opening; pizza pizza pizza in York.");
    await provider.set("phrase", "Our favourite is the new york pizza on the corner, a long walk from home.");
    await provider.set("other", "York minster is old.");
    expect(keysOf(await provider.search("new york pizza"))[0]).toBe("phrase");
  });

  it("an entry matching more of the query's terms outranks one repeating a single term", async () => {
    const { provider } = openProvider();
    await provider.set("repeats", "Harbour harbour harbour harbour, the harbour again.");
    await provider.set("covers", "The harbour crane lifted a container onto the ferry.");
    await provider.set("unrelated", "Mountain trails are closed.");
    expect(keysOf(await provider.search("which crane loads containers at the harbour?"))[0]).toBe("covers");
  });

  it("a rare term counts for more than a common one", async () => {
    const { provider } = openProvider();
    for (let index = 0; index < 12; index++) await provider.set(`note-${index}`, `Project note ${index}.`);
    await provider.set("zeppelin", "The zeppelin project note.");
    expect(keysOf(await provider.search("zeppelin project"))[0]).toBe("zeppelin");
  });

  it("a word in most entries does not crowd out the entry that answers the question", async () => {
    const { provider } = openProvider();
    for (let index = 0; index < 20; index++) {
      await provider.set(`user-fact-${index}`, `The user mentioned fact number ${index} about the user.`);
    }
    await provider.set("breakfast", "The user eats overnight oats for breakfast.");
    const keys = keysOf(await provider.search("what does the user eat for breakfast?"));
    expect(keys[0]).toBe("breakfast");
    // The common word still fills the remaining places, after the answer.
    expect(keys.length).toBe(10);
  });
});
