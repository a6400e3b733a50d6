import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteSkillProvider } from "../../src/index.js";
import { inObject } from "./in-object.js";

interface Cost {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

/** Rows read and written per operation, as the Durable Object's cursors report (what Cloudflare bills). */
async function costsAt(count: number) {
  return inObject(`skill-row-cost-${count}`, async (state) => {
    let reports: StatementReport[] = [];
    const skills = new SqliteSkillProvider(state.storage, {
      label: "skills",
      onStatement: (report) => reports.push(report),
    });
    for (let index = 0; index < count; index++)
      await skills.set(
        `skill-${String(index).padStart(4, "0")}`,
        `Body ${index}. ${"x".repeat(4_000)}`,
        `About ${index}`,
      );
    const measure = async (run: () => Promise<unknown>): Promise<Cost> => {
      reports = [];
      await run();
      return {
        statements: reports.length,
        rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
        rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      };
    };
    const listing = await skills.get();
    return {
      listedLines: listing?.split("\n").length ?? 0,
      get: await measure(() => skills.get()),
      load: await measure(() => skills.load("skill-0005")),
      loadMissing: await measure(() => skills.load("missing")),
      setNew: await measure(() => skills.set("new-skill", "New body", "New")),
      setChanged: await measure(() => skills.set("skill-0005", "Changed body", "Changed")),
      setUnchanged: await measure(() => skills.set("skill-0005", "Changed body", "Changed")),
      delete: await measure(() => skills.delete("new-skill")),
    };
  });
}

describe("SqliteSkillProvider row cost on a Durable Object", () => {
  it("costs constant rows for load, set and delete; the listing reads one row per skill", async () => {
    const small = await costsAt(10);
    const large = await costsAt(1_000);
    console.log(JSON.stringify({ 10: small, 1000: large }));
    expect(small.listedLines).toBe(10);
    expect(large.listedLines).toBe(1_000);
    for (const operation of [
      "load",
      "loadMissing",
      "setNew",
      "setChanged",
      "setUnchanged",
      "delete",
    ] as const) {
      expect(large[operation], `${operation} at 1,000 skills costs what it costs at 10`).toEqual(
        small[operation],
      );
      expect(large[operation].statements, operation).toBe(1);
    }
    expect(small.load).toMatchObject({ rowsRead: 1, rowsWritten: 0 });
    expect(small.setUnchanged.rowsWritten).toBe(0);
    expect(small.get).toMatchObject({ statements: 1, rowsRead: 10, rowsWritten: 0 });
    expect(large.get).toMatchObject({ statements: 1, rowsRead: 1_000, rowsWritten: 0 });
  });
});

/** A versioned write of one skill with `versions` kept, `history` versions of it already written. */
async function versionedCosts(history: number) {
  return inObject(`skill-version-cost-${history}`, async (state) => {
    let reports: StatementReport[] = [];
    const skills = new SqliteSkillProvider(state.storage, {
      label: "skills",
      versions: { retention: 5 },
      onStatement: (report) => reports.push(report),
    });
    for (let index = 0; index < history; index++) await skills.set("notes.md", `Version ${index}`);
    const measure = async (run: () => Promise<unknown>): Promise<Cost> => {
      reports = [];
      await run();
      return {
        statements: reports.length,
        rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
        rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      };
    };
    return {
      setChanged: await measure(() => skills.set("notes.md", "Changed")),
      setUnchanged: await measure(() => skills.set("notes.md", "Changed")),
      versions: await measure(() => skills.versions?.({ key: "notes.md" }) ?? Promise.resolve([])),
    };
  });
}

describe("SqliteSkillProvider with versions: row cost on a Durable Object", () => {
  it("a changed write costs the same whatever the number of versions written before", async () => {
    const few = await versionedCosts(10);
    const many = await versionedCosts(40);
    console.log(JSON.stringify({ 10: few, 40: many }));
    expect(many.setChanged, "a changed write after 40 versions costs what it costs after 10").toEqual(
      few.setChanged,
    );
    expect(many.setUnchanged).toEqual(few.setUnchanged);
    expect(
      many.versions.rowsRead,
      "versions() reads the kept versions only (retention 5)",
    ).toBeLessThanOrEqual(few.versions.rowsRead + 5);
  });
});
