import { readFileSync } from "node:fs";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { InMemoryRunStateStore } from "../../../sessions/src/memory/index.js";
import { contextPipeline, InMemoryHistoryPlugin } from "../../src/index.js";
import { answer, scriptedModel } from "../helpers.js";
import {
  DatabaseHistoryPlugin,
  type MessageDatabase,
  UserPreferencePlugin,
} from "./agent-framework-plugins.js";
import { conversation, systemMessages } from "./helpers.js";

/** A `MessageDatabase` over a Map: rows are JSON text, as a real table would hold them. */
function mapDatabase(): MessageDatabase & { rows: Map<string, string[]> } {
  const rows = new Map<string, string[]>();
  return {
    rows,
    async loadMessages(key) {
      return [...(rows.get(key) ?? [])];
    },
    async saveMessages(key, added) {
      rows.set(key, [...(rows.get(key) ?? []), ...added]);
    },
  };
}

describe("the README's two plugins from Microsoft Agent Framework's context-provider samples", () => {
  it("are the code in the README, character for character", () => {
    const source = readFileSync(new URL("./agent-framework-plugins.ts", import.meta.url), "utf8");
    const snippet = source.slice(
      source.indexOf("// README:begin\n") + "// README:begin\n".length,
      source.indexOf("// README:end"),
    );
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(snippet.length).toBeGreaterThan(500);
    expect(readme).toContain(`\`\`\`ts\n${snippet}\`\`\``);
  });

  it("remember the favourite food across calls and a restart, with the history in the database", async () => {
    const database = mapDatabase();
    const stateStore = new InMemoryRunStateStore();
    const audit = new InMemoryHistoryPlugin("audit", { loadMessages: false, storeContextMessages: true });
    const model = scriptedModel([
      answer("Noted!"),
      answer("Try a tomato risotto."),
      answer("Risotto again?"),
    ]);
    const start = () =>
      contextPipeline({
        model,
        stateStore,
        sessionId: "ada",
        plugins: [new DatabaseHistoryPlugin(database), new UserPreferencePlugin(), audit],
      });

    let pipeline = start();
    await generateText({ model: pipeline.model, prompt: "My favorite food is vegetarian risotto." });
    await generateText({ model: pipeline.model, prompt: "What should I cook tonight?" });
    pipeline = start();
    await generateText({ model: pipeline.model, prompt: "And tomorrow?" });

    const calls = model.doGenerateCalls;
    expect(systemMessages(calls[0])).toEqual([]);
    expect(systemMessages(calls[1])).toEqual(["User's favorite food is vegetarian risotto."]);
    expect(systemMessages(calls[2])).toEqual(["User's favorite food is vegetarian risotto."]);
    expect(conversation(calls[2])).toEqual([
      "user: My favorite food is vegetarian risotto.",
      "assistant: Noted!",
      "user: What should I cook tonight?",
      "assistant: Try a tomato risotto.",
      "user: And tomorrow?",
    ]);
    expect(await stateStore.load("ada")).toEqual({
      "db-history": { historyKey: "ada" },
      "user-preferences": { favoriteFood: "vegetarian risotto" },
    });
    expect(database.rows.get("ada")).toHaveLength(6);
    expect(audit.messages("ada")).toHaveLength(6);
  });
});
