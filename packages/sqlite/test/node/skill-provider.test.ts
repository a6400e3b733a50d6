import { isContextError } from "@contextblocks/core";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteContextProvider, SqliteSkillProvider } from "../../src/index.js";
import { HOSTILE_CONTENT, HOSTILE_LABELS } from "../hostile.js";

describe("SqliteSkillProvider on better-sqlite3 (file database)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  const tableExists = () =>
    temporary.database.prepare("SELECT 1 FROM sqlite_master WHERE name = 'contextblocks_skills'").get() !==
    undefined;

  it("creates no table on reads or deletes, and the table on the first set", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    expect(await skills.get()).toBeNull();
    expect(await skills.load("anything")).toBeNull();
    await skills.delete("anything");
    expect(tableExists()).toBe(false);
    await skills.set("deploy", "Run the deploy.", "How to deploy");
    expect(tableExists()).toBe(true);
    expect(await skills.load("deploy")).toBe("Run the deploy.");
  });

  it("lists `- key: description` in key order whatever the write order, without content", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    await skills.set("zebra", "Z body", "Last by key");
    await skills.set("alpha", "A body", "First by key");
    await skills.set("middle", "M body");
    expect(await skills.get()).toBe("- alpha: First by key\n- middle\n- zebra: Last by key");
  });

  it("keeps the stored description when set omits it, and clears it with an empty one", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    await skills.set("deploy", "v1", "How to deploy");
    await skills.set("deploy", "v2");
    expect(await skills.get()).toBe("- deploy: How to deploy");
    expect(await skills.load("deploy")).toBe("v2");
    await skills.set("deploy", "v2", "");
    expect(await skills.get()).toBe("- deploy");
  });

  it("writes nothing when set repeats what is stored", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    await skills.set("deploy", "v1", "How to deploy");
    const before = temporary.database.prepare("SELECT total_changes() AS n").get() as { n: number };
    await skills.set("deploy", "v1", "How to deploy");
    await skills.set("deploy", "v1");
    const after = temporary.database.prepare("SELECT total_changes() AS n").get() as { n: number };
    expect(after.n).toBe(before.n);
  });

  it("keeps labels and namespaces apart, and apart from context blocks of the same label", async () => {
    const plain = new SqliteSkillProvider(temporary.database, "skills");
    const other = new SqliteSkillProvider(temporary.database, "playbooks");
    const tenantA = new SqliteSkillProvider(temporary.database, { label: "skills", namespace: "tenant-a" });
    const block = new SqliteContextProvider(temporary.database, "skills");
    await tenantA.set("deploy", "A's deploy", "A");
    expect([await plain.get(), await other.get(), await plain.load("deploy")]).toEqual([null, null, null]);
    await plain.set("deploy", "plain deploy", "plain");
    await block.set("a whole block");
    expect(await tenantA.load("deploy")).toBe("A's deploy");
    expect(await plain.get()).toBe("- deploy: plain");
    expect(await block.get()).toBe("a whole block");
  });

  it("touches one row through the primary key for load, set and delete (no scan)", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    await skills.set("deploy", "body", "about");
    const plan = (query: string) =>
      (temporary.database.prepare(`EXPLAIN QUERY PLAN ${query}`).all() as { detail: string }[])
        .map((row) => row.detail)
        .join("; ");
    const byKey = plan("SELECT content FROM contextblocks_skills WHERE scope = 'skills' AND key = 'deploy'");
    expect(byKey).toMatch(
      /USING (?:PRIMARY KEY|INDEX sqlite_autoindex_contextblocks_skills_1) \(scope=\? AND key=\?\)/,
    );
    const listing = plan(
      "SELECT key, description FROM contextblocks_skills WHERE scope = 'skills' ORDER BY key",
    );
    expect(listing).toMatch(/\(scope=\?\)/);
    expect(listing, "the listing needs no sort").not.toMatch(/TEMP B-TREE/);
  });

  it("survives a reopened connection", async () => {
    await new SqliteSkillProvider(temporary.database, "skills").set("deploy", "durable", "About");
    const reopened = new SqliteSkillProvider(temporary.reopen(), "skills");
    expect(await reopened.load("deploy")).toBe("durable");
    expect(await reopened.get()).toBe("- deploy: About");
  });

  it("stores hostile keys and content byte for byte", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    for (const key of HOSTILE_LABELS) {
      for (const content of HOSTILE_CONTENT) {
        await skills.set(key, content, `about ${key.slice(0, 20)}`);
        expect(await skills.load(key)).toBe(content);
      }
    }
    const row = temporary.database.prepare("SELECT count(*) AS n FROM contextblocks_skills").get() as {
      n: number;
    };
    expect(row.n).toBe(HOSTILE_LABELS.length);
  });

  it("refuses bad keys, content and descriptions with a clear error, and keeps what is stored", async () => {
    const skills = new SqliteSkillProvider(temporary.database, "skills");
    await skills.set("deploy", "safe", "About deploying");
    const refusals: [() => Promise<unknown>, RegExp][] = [
      [
        () => skills.set("deploy", "\ud800 lone"),
        /content of skill "deploy" has a lone UTF-16 surrogate at index 0/,
      ],
      [() => skills.set("deploy\udc00", "x"), /skill key has a lone UTF-16 surrogate at index 6/],
      [
        () => skills.set("deploy", "x", "about \ud83d"),
        /description of skill "deploy" has a lone UTF-16 surrogate/,
      ],
      [
        () => skills.set("two\nlines", "x"),
        /key "two\\nlines" has a control character or line break at index 3/,
      ],
      [
        () => skills.set("deploy", "x", "two\nlines"),
        /description of skill "deploy" has a control character/,
      ],
      [() => skills.set("", "x"), /a skill key must be a non-empty string, got ""/],
      [
        () => skills.set("deploy", 42 as unknown as string),
        /content of skill "deploy" must be a string, got number \d+/,
      ],
      [
        () => skills.set("deploy", "x", 7 as unknown as string),
        /description of skill "deploy" must be a string or omitted/,
      ],
      [
        () => skills.load(undefined as unknown as string),
        /SqliteSkillProvider.load: a skill key must be a non-empty string/,
      ],
      [() => skills.delete("a\u0000b"), /control character/],
    ];
    for (const [attempt, message] of refusals) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code, String(message)).toBe("INVALID_INPUT");
      expect((error as Error).message).toMatch(message);
    }
    expect(await skills.load("deploy")).toBe("safe");
    expect(await skills.get()).toBe("- deploy: About deploying");
  });

  it("refuses a bad label or namespace, and use before a label is known", async () => {
    expect(() => new SqliteSkillProvider(temporary.database, { namespace: "" })).toThrow(
      /SqliteSkillProvider: a namespace must be a non-empty string/,
    );
    expect(() => new SqliteSkillProvider(temporary.database, "\udc00")).toThrow(
      /SqliteSkillProvider: the label/,
    );
    await expect(new SqliteSkillProvider(temporary.database).get()).rejects.toThrow(
      /SqliteSkillProvider has no label/,
    );
  });
});
