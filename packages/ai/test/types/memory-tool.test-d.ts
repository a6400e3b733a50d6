// The README's wiring of Anthropic's memory tool, compiled against the built package: `memoryTool(context).execute`
// is what `anthropic.tools.memory_20250818` takes, on @ai-sdk/anthropic 3 (ai 6) and 4 (ai 7, test-ai7).
import { anthropic } from "@ai-sdk/anthropic";
import { memoryTool } from "@contextblocks/ai";
import { ContextBlocks } from "@contextblocks/core";
import { InMemorySkillProvider } from "@contextblocks/core/memory";
import { describe, expectTypeOf, test } from "vitest";

const context = new ContextBlocks([
  { label: "user", description: "Facts about the user" },
  { label: "memories", provider: new InMemorySkillProvider() },
]);

describe("memoryTool", () => {
  test("its execute is the memory tool's execute", () => {
    const memory = anthropic.tools.memory_20250818({
      execute: memoryTool(context, { files: "memories" }).execute,
    });
    expectTypeOf(memory.execute).not.toBeUndefined();
  });

  test("a direct call takes the tool's commands and resolves to the answer text", () => {
    const { execute } = memoryTool(context);
    expectTypeOf(execute({ command: "view", path: "/memories" })).resolves.toBeString();
    // @ts-expect-error: not a command of memory_20250818
    void execute({ command: "undo_edit", path: "/memories/user.md" });
  });
});
