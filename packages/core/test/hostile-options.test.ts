import { describe, expect, it } from "vitest";
import { ContextBlocks, type ContextToolSpec, isContextError } from "../src/index.js";
import { loneSurrogateIndex } from "../src/store-kit.js";
import { KeyedSkillProvider, RecordingProvider, rejection, thrown } from "./helpers.js";

function spec(context: ContextBlocks, name: string): ContextToolSpec {
  const found = context.toolSpecs().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no ${name} tool`);
  return found;
}

// A model that makes up a 1 MB label or key gets an answer it can read, not its own megabyte back.
describe("errors quote a made-up label or key in part", () => {
  const made = "x".repeat(1_000_000);

  it("in the tools' answers: an unknown label, a key not there, a key never loaded", async () => {
    const skills = new KeyedSkillProvider();
    await skills.set("deploy", "Run wrangler deploy.");
    const context = new ContextBlocks([
      { label: "memory", provider: new RecordingProvider("kept") },
      { label: "skills", provider: skills },
    ]);
    const answers = [
      await spec(context, "set_context").execute({ label: made, content: "x" }),
      await spec(context, "load_context").execute({ label: "skills", key: made }),
      await spec(context, "unload_context").execute({ label: "skills", key: made }),
      await spec(context, "edit_context").execute({ label: "skills", key: made, old_str: "a", new_str: "b" }),
    ];
    for (const answer of answers) {
      expect(answer.isError).toBe(true);
      expect(answer.text.length).toBeLessThan(300);
      expect(answer.text).toContain(`"${"x".repeat(80)}…"`);
    }
    expect(answers[0]?.text).toMatch(/^Error: Block "x+…" not found\. Writable blocks: "memory", "skills"$/);
  });

  it("in the API's NOT_FOUND, whose error still carries the whole label", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider() }]);
    const error = await rejection(context.setBlock(made, "x"));
    expect(isContextError(error) && error.code).toBe("NOT_FOUND");
    expect((error as Error).message.length).toBeLessThan(200);
    expect(isContextError(error) && error.label).toBe(made);
  });

  it("never cuts a surrogate pair in half", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider() }]);
    const outcome = await spec(context, "set_context").execute({
      label: `${"x".repeat(79)}😀😀`,
      content: "x",
    });
    expect(outcome.text).toContain(`"${"x".repeat(79)}…"`);
    expect(loneSurrogateIndex(outcome.text)).toBe(-1);
  });
});

describe("maxToolContentLength is a positive integer", () => {
  it.each([Number.NaN, 0, -1, 1.5, Number.POSITIVE_INFINITY, "100"])(
    "refuses %s at construction",
    (length) => {
      const error = thrown(
        () => new ContextBlocks([], null, null, { maxToolContentLength: length as unknown as number }),
      );
      expect(isContextError(error) && error.code).toBe("INVALID_CONFIG");
      expect((error as Error).message).toMatch(/^maxToolContentLength must be a positive integer, got /);
    },
  );
});

// A counter that answers NaN made `NaN > maxTokens` false: every write passed the limit, and the prompt
// read "NaN%".
describe("a token counter's answers are checked", () => {
  it.each([Number.NaN, -1, "5", undefined, Number.POSITIVE_INFINITY])(
    "a write counted %s fails by name and stores nothing",
    async (count) => {
      const memory = new RecordingProvider("kept");
      const context = new ContextBlocks([{ label: "memory", provider: memory, maxTokens: 10 }], null, null, {
        tokenCounter: () => count as unknown as number,
      });
      const error = await rejection(context.setBlock("memory", "word ".repeat(1_000)));
      expect(isContextError(error) && error.code).toBe("INVALID_CONFIG");
      expect((error as Error).message).toMatch(/^tokenCounter must return a finite number ≥ 0, got /);
      expect(memory.value).toBe("kept");
      // The tool reads it as an error too, never as a write.
      const outcome = await spec(context, "set_context").execute({ label: "memory", content: "word" });
      expect(outcome.isError).toBe(true);
      expect(memory.value).toBe("kept");
    },
  );

  it("refuses a counter that is not a function", () => {
    const error = thrown(
      () => new ContextBlocks([], null, null, { tokenCounter: 5 as unknown as (text: string) => number }),
    );
    expect(isContextError(error) && error.code).toBe("INVALID_CONFIG");
  });

  it("keeps a counter's fractional answer", async () => {
    const context = new ContextBlocks(
      [{ label: "memory", provider: new RecordingProvider(), maxTokens: 10 }],
      null,
      null,
      { tokenCounter: () => 2.5 },
    );
    await context.setBlock("memory", "fine");
    expect(await context.freezeSystemPrompt()).toContain("[25% — 2.5/10 tokens]");
  });
});
