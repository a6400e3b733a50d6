import { describe, expect, it } from "vitest";
import { isContextError } from "../src/index.js";
import { namespaceProblem } from "../src/row-label.js";
import {
  checkNamespace,
  checkRowLabel,
  checkStoredLabel,
  loneSurrogateProblem,
  NAMESPACE_MARK,
  rowLabel,
} from "../src/store-kit.js";

const sqlite = { owner: "SqliteContextProvider", unstorable: loneSurrogateProblem("SQLite") };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isContextError(error) ? error.code : "not a ContextError";
  }
  return undefined;
}

describe("rowLabel", () => {
  it("keeps a plain label as it is and marks a namespaced one", () => {
    expect(rowLabel("memory", undefined)).toBe("memory");
    expect(rowLabel("memory", "tenant-a")).toBe(`${NAMESPACE_MARK}["tenant-a","memory"]`);
  });

  it("never gives two (namespace, label) pairs one row label", () => {
    const pairs: [string | undefined, string][] = [
      [undefined, "a"],
      ["a", "b"],
      ['a","b', "c"],
      ["a", 'b","c'],
      [`${NAMESPACE_MARK}["a"`, "b"],
      ["", ""],
      ["\\", '"'],
    ];
    const labels = new Set(pairs.map(([namespace, label]) => rowLabel(label, namespace)));
    expect(labels.size).toBe(pairs.length);
  });
});

describe("namespace and label checks", () => {
  it("accepts no namespace or a non-empty one the store holds", () => {
    expect(namespaceProblem(undefined, sqlite.unstorable)).toBeNull();
    expect(namespaceProblem("tenant-a", sqlite.unstorable)).toBeNull();
    expect(namespaceProblem("", sqlite.unstorable)).toBe(
      'a namespace must be a non-empty string or omitted, got ""',
    );
    expect(namespaceProblem(5, sqlite.unstorable)).toMatch(/got number 5/);
    expect(namespaceProblem("t\ud800", sqlite.unstorable)).toBe(
      "the namespace has a lone UTF-16 surrogate at index 1, which SQLite cannot store unchanged",
    );
    expect(checkNamespace("tenant-a", sqlite)).toBe("tenant-a");
    expect(() => checkNamespace(null, sqlite)).toThrow(
      /^SqliteContextProvider: a namespace must be .* got null$/,
    );
    expect(codeOf(() => checkNamespace("", sqlite))).toBe("INVALID_CONFIG");
  });

  it("uses the store's own rule for what it cannot hold", () => {
    const postgres = {
      owner: "PostgresContextProvider",
      unstorable: (text: string) => (text.includes("\u0000") ? "has a NUL character" : null),
    };
    expect(checkStoredLabel("a\ud800", postgres)).toBe("a\ud800");
    expect(() => checkStoredLabel("a\u0000", postgres)).toThrow(
      "PostgresContextProvider: the label has a NUL character",
    );
  });

  it("refuses an empty or non-string label, one the store cannot hold, and a plain label with the mark", () => {
    expect(checkRowLabel("memory", undefined, sqlite)).toBe("memory");
    expect(() => checkRowLabel("", undefined, sqlite)).toThrow(/a label must be a non-empty string, got ""/);
    expect(() => checkRowLabel(["x"], undefined, sqlite)).toThrow(/got an array/);
    expect(() => checkRowLabel("m\udc00", undefined, sqlite)).toThrow(
      /the label has a lone UTF-16 surrogate at index 1/,
    );
    expect(() => checkRowLabel(`${NAMESPACE_MARK}["x","y"]`, undefined, sqlite)).toThrow(/U\+001F/);
    // With a namespace the row label is encoded, so the mark cannot alias anything.
    expect(checkRowLabel(`${NAMESPACE_MARK}x`, "tenant", sqlite)).toBe(`${NAMESPACE_MARK}x`);
    expect(codeOf(() => checkRowLabel(`${NAMESPACE_MARK}x`, undefined, sqlite))).toBe("INVALID_CONFIG");
  });
});
