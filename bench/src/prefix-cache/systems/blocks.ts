import { SOUL } from "../session.js";
import type { SessionWorld } from "./system.js";

/** A block as both libraries declare it (their config shapes agree on these fields). */
export interface BlockDeclaration {
  label: string;
  description?: string;
  maxTokens?: number;
  provider: { get(): Promise<string | null> };
  whenChanged?: "remind";
}

/**
 * The session's blocks, in prompt order: the soul (read-only), memory (writable), knowledge (searchable),
 * environment (read-only, `whenChanged: "remind"`, read from `world`).
 */
export function sessionBlocks(
  world: SessionWorld,
  memory: BlockDeclaration["provider"],
  knowledge: BlockDeclaration["provider"],
): BlockDeclaration[] {
  return [
    { label: "soul", provider: { get: async () => SOUL } },
    {
      label: "memory",
      description: "Facts learned about the user and the systems",
      maxTokens: 2_000,
      provider: memory,
    },
    { label: "knowledge", description: "Team runbooks and notes", provider: knowledge },
    {
      label: "environment",
      description: "Date, region and open incidents",
      provider: { get: async () => world.environment },
      whenChanged: "remind",
    },
  ];
}
