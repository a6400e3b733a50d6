import { env, runInDurableObject } from "cloudflare:test";
import { Session } from "@contextblocks/agents/experimental/memory/session";
import { Session as AgentsSession } from "agents-session/experimental/memory/session";

// The differential harness: the same steps run against agents@0.22.0's `Session` and this entry's, each on a
// fresh Durable Object database, and what user code observes must be the same. What the README lists as a
// difference is left out or normalised: token figures, error wording (a throw is compared as a throw),
// overlays' `metadata.compaction`, the extra block fields.

export type AnySession = AgentsSession | Session;
export type Step = readonly [label: string, run: (session: AnySession) => unknown];
export type Build = (session: AnySession) => AnySession;

/** A step that opens the session again on the same database (a Durable Object woken after eviction). */
export const reopen: Step = ["reopen", () => undefined];

let objects = 0;

/** A Durable Object name used once in this test run. */
export function objectName(prefix: string): string {
  return `${prefix}-${objects++}`;
}

/**
 * What a step observed, comparable across the two: times, token figures and random ids (overlays', the
 * manager's sessions') replaced by placeholders, random ids numbered in the order they first appear.
 */
export function observe(value: unknown, ids: Map<string, string>): unknown {
  if (value === undefined) return "<undefined>";
  return JSON.parse(
    JSON.stringify(value, (key, item) => {
      // Times differ by when they ran (and the manager's carry milliseconds here: README).
      if (key === "createdAt" || key === "created_at" || key === "updated_at") return "<time>";
      if (key === "tokens") return "<tokens>";
      if (typeof item === "string") {
        return item.replace(/[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|cmp_[A-Za-z0-9_-]+/g, (id) => {
          if (!ids.has(id)) ids.set(id, `<random id ${ids.size}>`);
          return ids.get(id) as string;
        });
      }
      if (item !== null && typeof item === "object" && typeof item.id === "string") {
        // An overlay's `metadata.compaction` is ours only (README).
        if (item.id.startsWith("compaction_") && item.metadata?.compaction !== undefined) {
          const { metadata: _metadata, ...rest } = item;
          return rest;
        }
      }
      return item;
    }),
  );
}

export async function run(implementation: "agents" | "entry", build: Build, steps: readonly Step[]) {
  const name = objectName(implementation);
  return runInDurableObject(env.AGENT_OBJECT.getByName(name), async (agent) => {
    const open = () =>
      build(implementation === "agents" ? AgentsSession.create(agent) : Session.create(agent));
    let session = open();
    const ids = new Map<string, string>();
    const log: unknown[] = [];
    for (const step of steps) {
      if (step === reopen) {
        session = open();
        continue;
      }
      const [label, action] = step;
      try {
        log.push([label, observe(await action(session), ids)]);
      } catch {
        log.push([label, "<throws>"]);
      }
    }
    return log;
  });
}

/** The steps whose observations differ: `[]` when the entry behaves as agents does. */
export async function differences(build: Build, steps: readonly Step[]): Promise<unknown[]> {
  const agents = await run("agents", build, steps);
  const entry = await run("entry", build, steps);
  return agents.flatMap((observed, index) =>
    JSON.stringify(observed) === JSON.stringify(entry[index])
      ? []
      : [{ agents: observed, entry: entry[index] }],
  );
}

export const say = (id: string, role: string, text: string, extra: Record<string, unknown> = {}) =>
  ({ id, role, parts: [{ type: "text", text }], ...extra }) as never;

/** A block as agents reports it (ours adds `kind` and `whenChanged`). */
export const blockShape = (block: ReturnType<AnySession["getContextBlock"]>) =>
  block === null
    ? null
    : {
        label: block.label,
        description: block.description,
        content: block.content,
        maxTokens: block.maxTokens,
        writable: block.writable,
        isSkill: block.isSkill,
        isSearchable: block.isSearchable,
      };
