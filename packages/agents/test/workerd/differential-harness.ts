import { env, runInDurableObject } from "cloudflare:test";
import { Session } from "@contextblocks/agents/experimental/memory/session";
import { Session as AgentsSession } from "agents-session/experimental/memory/session";
import { observe } from "../observed-value.js";

export { observe };

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
