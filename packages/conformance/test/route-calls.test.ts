import { InMemoryContextProvider } from "@contextblocks/core/memory";
import { describe, expect, it } from "vitest";
import { describeContextProvider, routeProviderCalls } from "../src/index.js";

class PrivateState {
  #value = "private";
  async get(): Promise<string | null> {
    return this.#value;
  }
}

describe("routeProviderCalls", () => {
  it("runs every method call through the runner, with the original object as this", async () => {
    const calls: string[] = [];
    const provider = routeProviderCalls(new PrivateState(), async (call) => {
      calls.push("run");
      return call();
    });
    expect(await provider.get()).toBe("private");
    expect(calls).toEqual(["run"]);
  });

  it("keeps the shape and the non-function properties", () => {
    const original = new InMemoryContextProvider();
    const provider = routeProviderCalls(original, (call) => Promise.resolve(call()));
    expect(typeof provider.set).toBe("function");
    expect(provider.store).toBe(original.store);
  });
});

// A routed provider passes the suite (the runner here defers each call to a later microtask).
describeContextProvider(
  "InMemoryContextProvider routed through a runner",
  () => routeProviderCalls(new InMemoryContextProvider(), (call) => Promise.resolve().then(call)),
  {
    capabilities: { writable: true, versions: true },
    reopen: (provider) =>
      routeProviderCalls(new InMemoryContextProvider({ store: provider.store }), (call) =>
        Promise.resolve().then(call),
      ),
  },
);
