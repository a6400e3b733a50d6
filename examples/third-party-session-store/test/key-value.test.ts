import { describe, expect, it } from "vitest";
import { InMemoryKeyValueNamespace, listKeys } from "../src/index.js";

describe("InMemoryKeyValueNamespace", () => {
  it("gets, puts and deletes strings; an absent key is null and deleting it is no error", async () => {
    const namespace = new InMemoryKeyValueNamespace();
    expect(await namespace.get("a")).toBeNull();
    await namespace.put("a", "one");
    expect(await namespace.get("a")).toBe("one");
    await namespace.delete("a");
    await namespace.delete("a");
    expect(await namespace.get("a")).toBeNull();
  });

  it("lists a prefix in byte order, one page at a time, and listKeys walks every page", async () => {
    const namespace = new InMemoryKeyValueNamespace({ pageSize: 2 });
    await Promise.all(["p:c", "p:a", "q:z", "p:b"].map((key) => namespace.put(key, "")));
    const first = await namespace.list({ prefix: "p:" });
    expect(first).toEqual({ keys: [{ name: "p:a" }, { name: "p:b" }], list_complete: false, cursor: "p:b" });
    const cursor = first.list_complete ? undefined : first.cursor;
    expect(await namespace.list({ prefix: "p:", ...(cursor ? { cursor } : {}) })).toEqual({
      keys: [{ name: "p:c" }],
      list_complete: true,
    });
    expect(await listKeys(namespace, "p:")).toEqual(["p:a", "p:b", "p:c"]);
    expect(await listKeys(namespace, "none:")).toEqual([]);
  });
});
