import { countTokens as countCl100k } from "gpt-tokenizer/model/gpt-4";
import { countTokens as countO200k } from "gpt-tokenizer/model/gpt-4o";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "../src/index.js";

const PROSE = `The lighthouse keeper had not spoken to another person in eleven days when the supply boat finally
rounded the point. She watched it from the gallery, a small white shape fighting the swell, and tried to
remember what people usually said to one another after a long silence. In the end she simply waved, and the
skipper waved back, and that seemed to be enough for both of them. They unloaded flour, lamp oil, a crate of
apples and a bundle of letters tied with string, most of them for the keeper who had left the year before.`;

const CODE = `export function debounce<T extends (...args: never[]) => void>(fn: T, waitMs = 200) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: Parameters<T>): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...args);
    }, waitMs);
  };
}

const onResize = debounce(() => console.log(window.innerWidth, window.innerHeight), 100);
window.addEventListener("resize", onResize, { passive: true });`;

const JSON_TEXT = JSON.stringify(
  {
    user: { id: 4182, name: "Rosa Delgado", roles: ["editor", "reviewer"], active: true },
    preferences: { theme: "dark", language: "es-MX", notifications: { email: false, push: true } },
    lastSeen: "2026-02-11T18:04:55Z",
    quota: { used: 7340032, limit: 10485760 },
  },
  null,
  2,
);

const CHINESE =
  "今天下午我们讨论了新版本的发布计划。大家一致认为，应该先在小范围内灰度发布，观察一周的数据之后再决定是否全面上线。" +
  "测试团队提出，目前还有三个已知问题没有修复，其中一个会影响部分老用户的登录流程，需要优先处理。";

function ratio(estimate: number, real: number): number {
  return estimate / real;
}

describe("estimateTokens, the default counter", () => {
  it("is 0 for the empty string and positive for any other text", () => {
    expect(estimateTokens("")).toBe(0);
    for (const text of ["a", " ", "\n", "7", "—", "中", "🙂", "  \n\t"])
      expect(estimateTokens(text)).toBeGreaterThan(0);
  });

  it("counts a short common word as one token and long words as several", () => {
    expect(estimateTokens("hello")).toBe(1);
    expect(estimateTokens("internationalization")).toBeGreaterThan(1);
  });

  it("grows with the text and roughly adds up over concatenation", () => {
    const one = estimateTokens(PROSE);
    const two = estimateTokens(`${PROSE}\n${PROSE}`);
    expect(two).toBeGreaterThan(one);
    expect(Math.abs(two - 2 * one)).toBeLessThanOrEqual(2);
  });

  it("counts a dense script about one token per character", () => {
    expect(estimateTokens("中文字符")).toBe(4);
    expect(estimateTokens("ひらがな")).toBe(4);
  });

  it("does not under-count English prose against o200k or cl100k, and does not over-count it by much", () => {
    for (const real of [countO200k(PROSE), countCl100k(PROSE)]) {
      const value = ratio(estimateTokens(PROSE), real);
      expect(value).toBeGreaterThanOrEqual(1);
      expect(value).toBeLessThan(1.3);
    }
  });

  it("stays within 30% on code and JSON", () => {
    for (const text of [CODE, JSON_TEXT]) {
      for (const real of [countO200k(text), countCl100k(text)]) {
        const value = ratio(estimateTokens(text), real);
        expect(value).toBeGreaterThan(0.7);
        expect(value).toBeLessThan(1.3);
      }
    }
  });

  it("counts Chinese about as cl100k does, far closer than characters / 4, and never under o200k", () => {
    const estimate = estimateTokens(CHINESE);
    const quarter = Math.ceil(CHINESE.length / 4);
    const cl100k = countCl100k(CHINESE);
    expect(Math.abs(estimate - cl100k)).toBeLessThan(Math.abs(quarter - cl100k) / 4);
    expect(ratio(estimate, cl100k)).toBeGreaterThan(0.8);
    // o200k packs common Chinese words into single tokens: the estimate is high there, which is the safe side.
    expect(estimate).toBeGreaterThanOrEqual(countO200k(CHINESE));
  });

  it("counts emoji as more than one token", () => {
    expect(estimateTokens("🙂")).toBeGreaterThanOrEqual(2);
  });
});
