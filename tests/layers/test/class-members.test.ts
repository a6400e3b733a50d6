import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { publicMembers } from "../src/class-members.js";
import { workspacePackages } from "../src/import-closure.js";

/**
 * Issue 36: `Session` keeps the conversation and its compaction, `SessionManager` the registry and
 * `getSession`; blocks are reached through `session.context`, and agents-style forwarding lives in
 * `@contextblocks/agents`. The budgets hold the classes to that as users see them (the built `.d.ts`).
 */
const budgets = [
  { className: "Session", budget: 25 },
  { className: "SessionManager", budget: 15 },
] as const;

const sessions = workspacePackages().get("@contextblocks/sessions");

describe("public members of the sessions classes stay within their budget", () => {
  it.each(budgets)("$className has at most $budget public members", ({ className, budget }) => {
    if (sessions === undefined) throw new Error("@contextblocks/sessions is not in the workspace");
    const members = publicMembers(join(sessions.folder, "dist/index.d.ts"), className);
    console.log(`${className}: ${members.length} public members\n  ${members.join(", ")}`);
    expect(members.length, `${className}: ${members.join(", ")}`).toBeLessThanOrEqual(budget);
  });
});
