import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";

/** Blocks as an app declares them: a remind block, a plain one, a read-only one, and the files block. */
export function memoryContext(store = new InMemoryStore()) {
  return new ContextBlocks([
    { label: "soul", provider: { get: async () => "You are a careful assistant." } },
    {
      label: "user",
      description: "Facts about the user",
      maxTokens: 200,
      whenChanged: "remind",
      provider: new InMemoryContextProvider({ store, initial: "Name: Ada\nCity: Paris" }),
    },
    { label: "plans", provider: new InMemoryContextProvider({ store }) },
    { label: "memories", description: "Files Claude keeps", provider: new InMemorySkillProvider({ store }) },
  ]);
}

/** Everything a store holds: block texts, entries, and the versions of both. */
export function snapshot(store: InMemoryStore): string {
  return JSON.stringify([
    [...store.blocks],
    [...store.entries].map(([label, entries]) => [label, [...entries]]),
    [...store.versions],
    [...store.entryVersions],
  ]);
}
