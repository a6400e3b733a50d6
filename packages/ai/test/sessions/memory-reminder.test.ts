import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import {
  answer,
  callTools,
  lastUserTexts,
  scriptedModel,
  scriptedStreamModel,
  systemSeen,
} from "../helpers.js";

const FACT = "The user deploys on Cloudflare Workers.";

/** The wiring the root README shows, with default block settings: a read-only soul and a backend-stored memory. */
function documentedSession(backend: ReturnType<typeof inMemoryBackend>) {
  return new SessionBuilder(backend)
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
    .withContext("memory", { description: "Facts learned about the user", maxTokens: 1100 })
    .withCachedPrompt()
    .build();
}

describe.each(["generateText", "streamText"] as const)(
  "memory the model writes reaches it in the next turn, by default (%s)",
  (call) => {
    it("as a reminder after the cached prefix; the system prompt stays byte-identical until a refresh", async () => {
      const steps = [
        callTools(0, { toolName: "set_context", input: { label: "memory", content: FACT } }),
        answer("Noted."),
        answer("On Workers."),
        answer("Still Workers."),
      ];
      const model = call === "generateText" ? scriptedModel(steps) : scriptedStreamModel(steps);
      const calls = call === "generateText" ? model.doGenerateCalls : model.doStreamCalls;
      const backend = inMemoryBackend();
      const turn = async (prompt: string) => {
        // A new Session per turn, as a Worker builds one per request: what reaches the model comes from storage.
        const pipeline = contextPipeline({ model, session: documentedSession(backend) });
        const options = { model: pipeline.model, tools: pipeline.tools, prompt, stopWhen: stepCountIs(3) };
        return call === "generateText" ? (await generateText(options)).text : await streamText(options).text;
      };

      await turn("I deploy on Workers, remember that.");
      const firstSystem = systemSeen(calls[0]);
      expect(firstSystem).not.toContain(FACT);

      expect(await turn("Where do I deploy?")).toBe("On Workers.");
      const second = calls[2];
      // The prefix cache stays warm: the same system prompt, byte for byte.
      expect(systemSeen(second)).toBe(firstSystem);
      // The fact travels after the prefix, on the newest user message.
      const newest = lastUserTexts(second).join("\n");
      expect(newest).toContain("Where do I deploy?");
      expect(newest).toContain(FACT);
      expect(newest).toContain("MEMORY");

      // A refresh (the one deliberate cache bust) moves the fact into the prompt; the reminder stops.
      await documentedSession(backend).context.refreshSystemPrompt();
      await turn("And now?");
      const third = calls[3];
      expect(systemSeen(third)).toContain(FACT);
      expect(lastUserTexts(third).join("\n")).not.toContain(FACT);
    });
  },
);

describe("defaults a block declaration leaves to the builder", () => {
  it("a block the model writes whole reminds; read-only, searchable and explicit choices keep theirs", () => {
    const session = new SessionBuilder(inMemoryBackend())
      .withContext("soul", { provider: { get: async () => "soul" } })
      .withContext("memory")
      .withContext("notes", { provider: { get: async () => null, set: async () => {} } })
      .withContext("quiet", { whenChanged: "wait" })
      .withContext("knowledge", {
        provider: { get: async () => null, search: async () => null, set: async () => {} },
      })
      .build();
    const whenChanged = Object.fromEntries(
      session.context.getConfigs().map((config) => [config.label, config.whenChanged]),
    );
    expect(whenChanged).toEqual({
      soul: "wait",
      memory: "remind",
      notes: "remind",
      quiet: "wait",
      knowledge: "wait",
    });
  });
});
