import { InMemoryStore } from "@contextblocks/core/memory";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryTool } from "../../src/index.js";
import { memoryContext, snapshot } from "./memory-fixture.js";

/** Pieces of paths a confused or hostile model sends: traversal, encodings, other separators, control characters. */
const HOSTILE_PIECES = [
  "..",
  "%2e%2e",
  "%2E%2e%2f",
  "..%2f",
  "\\",
  "..\\..\\",
  "//",
  "/./",
  "/../",
  "\u0000",
  "\n",
  "\u2028",
] as const;

const NAMES = ["user.md", "notes", "todo.md", "soul.md", "a", "．．", "／etc", "ü", " "] as const;

/** A path that holds at least one hostile piece somewhere, or starts outside `/memories/`. */
const hostilePath = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("/memories/", "/memories", "/"),
      fc.array(fc.constantFrom(...NAMES), { maxLength: 3 }),
      fc.constantFrom(...HOSTILE_PIECES),
      fc.array(fc.constantFrom(...NAMES, ...HOSTILE_PIECES), { maxLength: 3 }),
    )
    .map(([root, before, hostile, after]) => `${root}${[...before, hostile, ...after].join("/")}`),
  fc
    .tuple(
      fc.constantFrom(
        "",
        "/",
        "memories/",
        "/Memories/",
        "/memoriesx/",
        "/etc/",
        "~/memories/",
        "./memories/",
      ),
      fc.constantFrom(...NAMES),
    )
    .map(([root, name]) => `${root}${name}`),
);

const WRITES = (path: string) => [
  { command: "create", path, file_text: "overwritten" },
  { command: "str_replace", path, old_str: "Ada", new_str: "Eve" },
  { command: "insert", path, insert_line: 0, insert_text: "first line" },
  { command: "delete", path },
  { command: "rename", old_path: "/memories/kept.md", new_path: path },
  { command: "rename", old_path: path, new_path: "/memories/moved.md" },
];

describe("memoryTool on hostile paths", () => {
  it("answers every write to a path outside /memories, with traversal, encodings or control characters with an error, and writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(hostilePath, async (path) => {
        const store = new InMemoryStore();
        const context = memoryContext(store);
        const tool = memoryTool(context, { files: "memories" });
        await tool.execute({ command: "create", path: "/memories/kept.md", file_text: "kept" });
        await context.load();
        const before = snapshot(store);
        for (const input of WRITES(path)) {
          const answer = await tool.execute(input as never);
          expect(answer, `${input.command} on ${JSON.stringify(path)}`).toMatch(/^Error: /);
        }
        expect(await tool.execute({ command: "view", path })).toMatch(/^Error: /);
        expect(snapshot(store), `the store after writes to ${JSON.stringify(path)}`).toBe(before);
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  it("never rejects, whatever the input, and a refused command writes nothing", async () => {
    const anyInput = fc.record(
      {
        command: fc.constantFrom("view", "create", "str_replace", "insert", "delete", "rename", "undo", 7),
        path: fc.oneof(fc.string(), fc.constant("/memories/user.md"), fc.integer()),
        old_path: fc.string(),
        new_path: fc.string(),
        file_text: fc.oneof(fc.string(), fc.constant(null)),
        old_str: fc.string(),
        new_str: fc.string(),
        insert_line: fc.oneof(fc.integer({ min: -3, max: 5 }), fc.double()),
        insert_text: fc.string(),
        view_range: fc.oneof(fc.array(fc.integer({ min: -2, max: 4 })), fc.string()),
      },
      { requiredKeys: ["command"] },
    );
    await fc.assert(
      fc.asyncProperty(anyInput, async (input) => {
        const store = new InMemoryStore();
        const context = memoryContext(store);
        await context.load();
        const before = snapshot(store);
        const answer = await memoryTool(context, { files: "memories" }).execute(input as never);
        expect(typeof answer).toBe("string");
        if (answer.startsWith("Error: ")) expect(snapshot(store)).toBe(before);
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});
