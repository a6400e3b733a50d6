import { describe, expect, it } from "vitest";
import { type ContextBlock, ContextBlocks, renderPrompt, renderSection, usagePercent } from "../src/index.js";
import { renderHeader, renderUsage } from "../src/prompt-format.js";
import { SECTION_RULE } from "../src/store-kit.js";
import {
  KeyedSearchProvider,
  KeyedSkillProvider,
  RecordingProvider,
  RULE,
  readonlyProvider,
} from "./helpers.js";

const get = async () => "content";
const set = async () => {};
const search = async () => null;
const load = async () => null;

describe("agents/context's documented render example, byte for byte", () => {
  it("renders MEMORY (Facts learned about the user) [45% — 495/1100 tokens] [writable]", async () => {
    const content = "用户偏好 TypeScript，正在使用 Cloudflare Agents";
    const context = new ContextBlocks(
      [
        {
          label: "memory",
          description: "Facts learned about the user",
          maxTokens: 1_100,
          provider: new RecordingProvider(content),
        },
      ],
      null,
      null,
      { tokenCounter: (text) => (text === content ? 495 : 0) },
    );
    const expected = [
      "══════════════════════════════════════════════",
      "MEMORY (Facts learned about the user) [45% — 495/1100 tokens] [writable]",
      "══════════════════════════════════════════════",
      "用户偏好 TypeScript，正在使用 Cloudflare Agents",
    ].join("\n");
    expect(await context.freezeSystemPrompt()).toBe(expected);
  });

  it("the rule is 46 U+2550 characters", () => {
    expect(SECTION_RULE).toBe(RULE);
    expect([...SECTION_RULE]).toHaveLength(46);
    expect(new Set(SECTION_RULE)).toEqual(new Set(["\u2550"]));
  });

  it("renders agents/context's two-block example: soul (read-only) then memory (writable)", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
      {
        label: "memory",
        description: "Facts learned about the user",
        maxTokens: 1_100,
        provider: new RecordingProvider(null),
      },
    ]);
    expect(await context.freezeSystemPrompt()).toBe(
      `${RULE}\nSOUL [readonly]\n${RULE}\nYou are a helpful assistant.\n\n` +
        `${RULE}\nMEMORY (Facts learned about the user) [0% — 0/1100 tokens] [writable]\n${RULE}\n`,
    );
  });
});

describe("header", () => {
  const base = { label: "notes", tokens: 0, kind: "writable" as const };

  it("upper-cases the label and adds the description in parentheses", () => {
    expect(renderHeader(base)).toBe("NOTES [writable]");
    expect(renderHeader({ ...base, description: "Scratch pad" })).toBe("NOTES (Scratch pad) [writable]");
  });

  it("shows usage only when maxTokens is set, with an em dash and a rounded percentage", () => {
    expect(renderHeader({ ...base, tokens: 1, maxTokens: 3 })).toBe("NOTES [33% — 1/3 tokens] [writable]");
    expect(renderHeader({ ...base, tokens: 2, maxTokens: 3 })).toBe("NOTES [67% — 2/3 tokens] [writable]");
    expect(renderUsage(0, 50)).toBe("[0% — 0/50 tokens]");
    expect(renderUsage(50, 50)).toBe("[100% — 50/50 tokens]");
    expect(renderUsage(1, 200)).toBe("[1% — 1/200 tokens]");
    expect(usagePercent(1, 1000)).toBe(0);
    expect(usagePercent(5, 1000)).toBe(1);
    expect(renderUsage(1, 3)).toContain(" — ");
    expect(renderUsage(1, 3)).not.toContain(" - ");
  });

  it.each([
    ["readonly", { get }, "[readonly]"],
    ["writable", { get, set }, "[writable]"],
    ["loadable", { get, load }, "[loadable]"],
    ["loadable with set", { get, load, set }, "[loadable]"],
    ["searchable", { get, search }, "[searchable]"],
    ["searchable with set", { get, search, set }, "[searchable]"],
    ["searchable and loadable", { get, search, load, set }, "[searchable]"],
  ])(
    "marker precedence: a %s provider renders its marker and only that one",
    async (_name, provider, marker) => {
      const context = new ContextBlocks([{ label: "block", provider }]);
      const prompt = await context.freezeSystemPrompt();
      const header = prompt.split("\n")[1];
      expect(header).toBe(`BLOCK ${marker}`);
    },
  );
});

describe("sections", () => {
  it("joins sections with one blank line, in declaration order", async () => {
    const context = new ContextBlocks([
      { label: "zeta", provider: readonlyProvider("last letter") },
      { label: "alpha", provider: readonlyProvider("first letter") },
      { label: "mid", provider: readonlyProvider("middle") },
    ]);
    expect(await context.freezeSystemPrompt()).toBe(
      [
        `${RULE}\nZETA [readonly]\n${RULE}\nlast letter`,
        `${RULE}\nALPHA [readonly]\n${RULE}\nfirst letter`,
        `${RULE}\nMID [readonly]\n${RULE}\nmiddle`,
      ].join("\n\n"),
    );
  });

  it("skips an empty read-only block (null or empty string)", async () => {
    const context = new ContextBlocks([
      { label: "none", provider: readonlyProvider(null) },
      { label: "empty", provider: readonlyProvider("") },
      { label: "soul", provider: readonlyProvider("Be brief.") },
    ]);
    expect(await context.freezeSystemPrompt()).toBe(`${RULE}\nSOUL [readonly]\n${RULE}\nBe brief.`);
  });

  it("always renders empty writable, loadable, searchable and remind blocks", async () => {
    const context = new ContextBlocks([
      { label: "memory", provider: new RecordingProvider(null) },
      { label: "skills", provider: new KeyedSkillProvider() },
      { label: "knowledge", provider: new KeyedSearchProvider() },
      { label: "environment", provider: readonlyProvider(null), whenChanged: "remind" },
      { label: "hidden", provider: readonlyProvider(null) },
    ]);
    expect(await context.freezeSystemPrompt()).toBe(
      [
        `${RULE}\nMEMORY [writable]\n${RULE}\n`,
        `${RULE}\nSKILLS [loadable]\n${RULE}\n`,
        `${RULE}\nKNOWLEDGE [searchable]\n${RULE}\n`,
        `${RULE}\nENVIRONMENT [readonly]\n${RULE}\n`,
      ].join("\n\n"),
    );
  });

  it("renders a searchable block's get() summary, not its entries", async () => {
    const provider = new KeyedSearchProvider();
    provider.entries.set("a", "secret entry text");
    provider.entries.set("b", "another");
    const context = new ContextBlocks([{ label: "knowledge", provider }]);
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("2 entries indexed.");
    expect(prompt).not.toContain("secret entry text");
  });

  it("keeps content byte for byte when it has no line starting with a rule character", async () => {
    const content = "Line one\n\n  indented ═ mid-line rule ═══\nTabs\tand trailing spaces   \r\nCRLF end\n";
    const context = new ContextBlocks([{ label: "raw", provider: readonlyProvider(content) }]);
    expect(await context.freezeSystemPrompt()).toBe(`${RULE}\nRAW [readonly]\n${RULE}\n${content}`);
  });

  it("renderPrompt and renderSection are the pure functions behind the prompt", () => {
    const block: ContextBlock = {
      label: "memory",
      content: "x",
      tokens: 1,
      maxTokens: 10,
      kind: "writable",
      whenChanged: "wait",
      writable: true,
      isSearchable: false,
      isSkill: false,
    };
    expect(renderSection(block)).toBe(`${RULE}\nMEMORY [10% — 1/10 tokens] [writable]\n${RULE}\nx`);
    expect(renderPrompt([block, { ...block, label: "empty", kind: "readonly", content: "" }])).toBe(
      renderSection(block),
    );
    expect(renderPrompt([])).toBe("");
  });
});
