import { describe, expect, it } from "vitest";
import type { ListSessionsOptions, SessionInfo } from "../src/index.js";
import { SessionBuilder, SessionManager } from "../src/index.js";
import { InMemorySessionRegistry, inMemoryBackend } from "../src/memory/index.js";
import type { SessionRegistry } from "../src/store-kit.js";

// What a manager does with sessions runs on every backend in tests/backends; here: what it refuses.
describe("new SessionManager", () => {
  it("refuses what is not a backend or a builder, naming it", () => {
    expect(() => new SessionManager({} as never)).toThrow(/expected a SessionBackend/);
    expect(() => new SessionManager(42 as never)).toThrow(/expected a SessionBackend/);
    expect(new SessionManager(new SessionBuilder(inMemoryBackend())).getSession("a").id).toBe("a");
  });
});

// The SQLite backend refused these by name while the memory backend found nothing: the check is the
// manager's now, the same on every backend.
describe("SessionManager.search", () => {
  it.each([0, -1, Number.NaN, 1_001, Number.POSITIVE_INFINITY])(
    "refuses a limit of %s by name",
    async (limit) => {
      const manager = new SessionManager(inMemoryBackend());
      await manager
        .getSession("a")
        .appendMessage({ id: "a1", role: "user", parts: [{ type: "text", text: "deploy on Friday" }] });
      await expect(manager.search("deploy", { limit })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: `search: limit must be a whole number from 1 to 1000, got ${limit}`,
      });
      expect((await manager.search("deploy", { limit: 1 })).map((hit) => hit.id)).toEqual(["a1"]);
    },
  );

  // JavaScript would read these as 10, 1 and 5: a limit is a number, or it is refused naming what it was.
  it.each([
    ["10", 'got "10"'],
    [true, "got boolean true"],
    [[5], "got an array"],
  ])("refuses a limit of %j by name", async (limit, named) => {
    const manager = new SessionManager(inMemoryBackend());
    await manager
      .getSession("a")
      .appendMessage({ id: "a1", role: "user", parts: [{ type: "text", text: "deploy" }] });
    const search = () => manager.search("deploy", { limit: limit as never });
    await expect(search()).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(search()).rejects.toThrow(named);
    await expect(manager.getSession("a").search("deploy", { limit: limit as never })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("floors a fractional limit, as documented", async () => {
    const manager = new SessionManager(inMemoryBackend());
    for (const id of ["a1", "a2", "a3"]) {
      await manager
        .getSession("a")
        .appendMessage({ id, role: "user", parts: [{ type: "text", text: "deploy" }] });
    }
    expect(await manager.search("deploy", { limit: 2.5 })).toHaveLength(2);
  });
});

// A session id comes from the caller (often a URL path) and has no length cap: an error quotes it clipped,
// so a refusal never echoes megabytes back into a log or a response.
/** A registry written before `list` took options: it answers every row whatever it is asked. */
class RegistryBeforeTheLimit extends InMemorySessionRegistry {
  readonly asked: (ListSessionsOptions | undefined)[] = [];
  override list(options?: ListSessionsOptions): Promise<SessionInfo[]> {
    this.asked.push(options);
    return super.list();
  }
}

describe("SessionManager.list", () => {
  it("passes { limit } on to the registry and keeps the first `limit` even when the registry answers more", async () => {
    const registry = new RegistryBeforeTheLimit();
    const manager = new SessionManager(inMemoryBackend({ registry }));
    for (const name of ["one", "two", "three"]) await manager.create(name);
    expect((await manager.list({ limit: 2 })).map((info) => info.name)).toEqual(["three", "two"]);
    expect((await manager.list()).map((info) => info.name)).toEqual(["three", "two", "one"]);
    expect(registry.asked).toEqual([{ limit: 2 }, undefined]);
  });

  it.each([0, -1, 1.5, 1_001, Number.NaN, "2", null])("refuses a limit of %s by name", async (limit) => {
    const manager = new SessionManager(inMemoryBackend());
    await manager.create("one");
    await expect(manager.list({ limit: limit as number })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(/^list: limit must be a whole number from 1 to 1000, got /),
    });
    await expect(manager.list(null as never)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});

describe("SessionManager errors quote ids clipped", () => {
  const long = `s${"x".repeat(100_000)}`;
  const refusal = (attempt: Promise<unknown>) =>
    attempt.then(
      () => new Error("not refused"),
      (caught: unknown) => caught as Error,
    );

  it("fork and compactAndSplit of a session that is not there", async () => {
    const manager = new SessionManager(inMemoryBackend());
    for (const attempt of [
      () => manager.fork(long, `m${"y".repeat(1_000)}`, "copy"),
      () => manager.compactAndSplit(long, "sum"),
    ]) {
      const error = await refusal(attempt());
      expect(error).toMatchObject({ code: "NOT_FOUND" });
      expect(error.message).toMatch(/session "sx+…"/);
      expect(error.message.length).toBeLessThan(300);
    }
  });

  it("a registry's refusal of an id it holds", async () => {
    const registry = inMemoryBackend().registry;
    const held = long.slice(0, 1_024);
    await registry.create(held, "one");
    const error = await refusal(registry.create(held, "again"));
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
    expect(error.message.length).toBeLessThan(300);
  });

  it("addUsage refuses an amount over Number.MAX_SAFE_INTEGER, at once and async: two near 1e308 made the totals Infinity for good", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const synchronous = manager.synchronous;
    if (synchronous === undefined) throw new Error("the memory registry answers at once");
    const info = synchronous.create("chat");
    synchronous.addUsage(info.id, Number.MAX_SAFE_INTEGER, 0, 0);
    expect(() => synchronous.addUsage(info.id, 1e308, 0, 0)).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: `addUsage: inputTokens must be at most ${Number.MAX_SAFE_INTEGER}, got number 1e+308`,
      }),
    );
    await expect(manager.addUsage(info.id, 0, 0, 1e308)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("addUsage: cost must be at most"),
    });
    // The registry checks on its own too (a caller below the manager).
    await expect(manager.backend.registry.addUsage(info.id, 0, 2 ** 60, 0)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(synchronous.get(info.id)).toMatchObject({
      input_tokens: Number.MAX_SAFE_INTEGER,
      output_tokens: 0,
      estimated_cost: 0,
    });
  });

  it("addUsage refuses a negative amount and keeps the totals", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const info = await manager.create("chat");
    await manager.addUsage(info.id, 100, 20, 0.5);
    await expect(manager.addUsage(info.id, -100, 0, 0)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: "addUsage: inputTokens must be a finite number ≥ 0, got number -100",
    });
    await expect(manager.addUsage(info.id, 0, 0, -0.5)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await manager.get(info.id)).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      estimated_cost: 0.5,
    });
  });
});

// A name is listed on every page load: a 3 MB one is refused by the manager before any registry is asked, so a
// registry that keeps whatever it is given (a third party's) never sees it.
describe("SessionManager caps the text it gives the registry", () => {
  function permissiveBackend() {
    const backend = inMemoryBackend();
    const given: string[] = [];
    const registry = backend.registry;
    const create = registry.create.bind(registry);
    const update = registry.update.bind(registry);
    Object.assign(registry, {
      create: async (id: string, name: string, options?: object) => {
        given.push(`create ${name.length}`);
        return create(id, name.slice(0, 10), options);
      },
      update: async (id: string, changes: { name: string }) => {
        given.push(`update ${changes.name.length}`);
        return update(id, { name: changes.name.slice(0, 10) });
      },
    });
    return { backend, given };
  }

  it("refuses a name, model or source over maximumSessionTextLength in create, rename and fork, naming the field", async () => {
    const { backend, given } = permissiveBackend();
    const manager = new SessionManager(backend);
    const chat = await manager.create("chat");
    await manager
      .getSession(chat.id)
      .appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });
    const huge = "n".repeat(3 * 1024 * 1024);
    const limit = "the limit is 1024; nothing was stored";
    for (const [attempt, expected] of [
      [() => manager.create(huge), `create: the name is ${huge.length} characters long; ${limit}`],
      [
        () => manager.create("ok", { model: "m".repeat(1_025) }),
        `create: the model is 1025 characters long; ${limit}`,
      ],
      [
        () => manager.create("ok", { source: "s".repeat(1_025) }),
        `create: the source is 1025 characters long; ${limit}`,
      ],
      [() => manager.rename(chat.id, huge), `rename: the name is ${huge.length} characters long; ${limit}`],
      [
        () => manager.fork(chat.id, "m1", huge),
        `create: the name is ${huge.length} characters long; ${limit}`,
      ],
      [() => manager.fork(chat.id, "", "copy"), `fork: atMessageId must be a non-empty string, got ""`],
    ] as const) {
      await expect(attempt()).rejects.toMatchObject({ code: "INVALID_INPUT", message: expected });
    }
    expect(given).toEqual(["create 4"]);
    expect((await manager.list()).map((row) => row.name)).toEqual(["chat"]);
  });
});

// A hostile or mistaken argument is refused by name before anything is read or changed, on every backend
// alike (a number for an id reached a registry's message formatting as a TypeError; a summary that was not
// text ended the old session and stored the number).
describe("SessionManager refuses malformed arguments by name, changing nothing", () => {
  it("ids that are not non-empty strings, a summary that is not text, options that are not objects", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const chat = await manager.create("chat");
    for (const [attempt, expected] of [
      [() => manager.delete(""), 'delete: the session id must be a non-empty string, got ""'],
      [() => manager.delete(42 as never), "delete: the session id must be a non-empty string, got number 42"],
      [
        () => manager.rename(42 as never, "x"),
        "rename: the session id must be a non-empty string, got number 42",
      ],
      [
        () => manager.compactAndSplit(chat.id, 42 as never),
        "compactAndSplit: the summary must be a string, got number 42",
      ],
      [
        () => manager.compactAndSplit(chat.id, "summary \uD800"),
        "compactAndSplit: the summary has a lone UTF-16 surrogate at index 8; nothing was stored",
      ],
      [
        () => manager.create("x", null as never),
        "create: expected options { parentSessionId?, model?, source? }, got null",
      ],
      [() => manager.search("chat", null as never), "search: expected options { limit? }, got null"],
    ] as const) {
      await expect(attempt()).rejects.toMatchObject({ code: "INVALID_INPUT", message: expected });
    }
    expect((await manager.list()).map((row) => [row.id, row.name, row.end_reason])).toEqual([
      [chat.id, "chat", null],
    ]);
  });

  it("the memory backend deletes the default session whole (it keeps no run state for it) and refuses a non-string first", async () => {
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend).build();
    await session.appendMessage({ id: "d1", role: "user", parts: [{ type: "text", text: "default" }] });
    await expect(backend.deleteSession(42 as never)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect((await session.getHistory()).map((message) => message.id)).toEqual(["d1"]);
    await backend.deleteSession("");
    expect(await new SessionBuilder(backend).build().getHistory()).toEqual([]);
  });
});

describe("SessionManager.synchronous", () => {
  it("answers at once on a registry that does, with the async methods' checks, rows and events", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const events: string[] = [];
    manager.subscribe((event) => events.push(event.type));
    const now = manager.synchronous;
    if (now === undefined) throw new Error("the memory registry answers at once");
    const info = now.create("Support", { model: "m" });
    expect(events).toEqual(["session-created"]);
    expect(now.get(info.id)).toEqual(await manager.get(info.id));
    now.rename(info.id, "Renamed");
    now.addUsage(info.id, 2, 3, 0.5);
    expect(now.list({ limit: 1 })).toEqual(await manager.list());
    expect(now.list()[0]).toMatchObject({ name: "Renamed", input_tokens: 2, output_tokens: 3 });
    for (const attempt of [
      () => now.create("x".repeat(1_025)),
      () => now.create("ok", null as never),
      () => now.rename("", "x"),
      () => now.list({ limit: 0 }),
      () => now.addUsage(info.id, -1, 0, 0),
    ]) {
      expect(attempt).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    }
    expect(now.list()).toHaveLength(1);
    expect(events).toEqual(["session-created"]);
  });

  it("searches at once where the backend's search does, with the async search's hits and refusals", async () => {
    const manager = new SessionManager(inMemoryBackend());
    const now = manager.synchronous;
    const search = now?.search;
    if (now === undefined || search === undefined) throw new Error("the memory backend searches at once");
    const info = now.create("Harbour");
    await manager.getSession(info.id).appendMessage({
      id: "h1",
      role: "user",
      parts: [{ type: "text", text: "The harbour master rings the bell at noon" }],
    });
    const hits = search("harbour bell", { limit: 5 });
    expect(hits.map((hit) => [hit.id, hit.sessionId])).toEqual([["h1", info.id]]);
    expect(hits).toEqual(await manager.search("harbour bell", { limit: 5 }));
    expect(() => search("harbour", { limit: 0 })).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => search(3 as never)).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    // A backend without a synchronous search: the registry's methods still answer at once, search does not.
    const withoutSearch = new SessionManager({ ...inMemoryBackend(), searchMessagesSync: undefined });
    expect(withoutSearch.synchronous).toBeDefined();
    expect(withoutSearch.synchronous?.search).toBeUndefined();
  });

  it("is undefined where the registry answers only with promises (as Postgres' does)", () => {
    const memory = inMemoryBackend();
    const inner = memory.registry;
    const registry: SessionRegistry = {
      create: (...args) => inner.create(...args),
      get: (id) => inner.get(id),
      list: (options) => inner.list(options),
      update: (id, changes) => inner.update(id, changes),
      touch: (id) => inner.touch(id),
      addUsage: (...args) => inner.addUsage(...args),
      delete: (id) => inner.delete(id),
    };
    expect(new SessionManager({ ...memory, registry }).synchronous).toBeUndefined();
    expect(new SessionManager(memory).synchronous).toBeDefined();
  });
});
