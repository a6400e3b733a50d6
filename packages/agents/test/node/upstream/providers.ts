// User-side providers for the scenario tests: what an agents user writes against the provider interfaces
// (a constant, a variable, a map of skills or notes). None of them stands in for contextblocks' storage.
import type {
  ContextProvider,
  SearchProvider,
  SkillProvider,
  WritableContextProvider,
} from "@contextblocks/agents/experimental/memory/session";

export const fixed = (value: string | null): ContextProvider => ({ get: async () => value });

export function variable(initial: string | null = null): WritableContextProvider & { value: string | null } {
  const provider = {
    value: initial,
    get: async () => provider.value,
    set: async (content: string) => {
      provider.value = content;
    },
  };
  return provider;
}

/** Skills in a map; the listing is `- key: description`, one a line. */
export function skillMap(
  initial: Record<string, { content: string; description?: string }> = {},
): SkillProvider {
  const skills = new Map(Object.entries(initial));
  return {
    get: async () =>
      skills.size === 0
        ? null
        : [...skills]
            .map(([key, { description }]) => `- ${key}${description ? `: ${description}` : ""}`)
            .join("\n"),
    load: async (key: string) => skills.get(key)?.content ?? null,
    set: async (key: string, content: string, description?: string) => {
      skills.set(key, description === undefined ? { content } : { content, description });
    },
  };
}

/** Notes in a map, found by a case-insensitive substring; `set` absent when `readOnly`. */
export function noteMap(initial: Record<string, string> = {}, readOnly = false): SearchProvider {
  const notes = new Map(Object.entries(initial));
  const provider: SearchProvider = {
    get: async () =>
      notes.size === 0
        ? null
        : `${notes.size} entries indexed.\n${[...notes.keys()].map((key) => `- ${key}`).join("\n")}`,
    search: async (query: string) => {
      const hits = [...notes].filter(([, text]) => text.toLowerCase().includes(query.toLowerCase()));
      return hits.length === 0 ? null : hits.map(([key, text]) => `[${key}]\n${text}`).join("\n\n");
    },
  };
  if (!readOnly) {
    provider.set = async (key: string, content: string) => {
      notes.set(key, content);
    };
  }
  return provider;
}

/** Calls a tool of `tools()` the way the AI SDK does, and returns its (text) result. */
export async function call(tools: Record<string, unknown>, name: string, input: unknown): Promise<string> {
  const tool = tools[name] as
    | { execute?: (input: unknown, options: unknown) => Promise<unknown> }
    | undefined;
  if (tool?.execute === undefined) throw new Error(`no tool ${name}`);
  return (await tool.execute(input, { toolCallId: "call-1", messages: [] })) as string;
}

export const describeTool = (tools: Record<string, unknown>, name: string): string =>
  (tools[name] as { description?: string } | undefined)?.description ?? "";
