import { afterEach, describe, it } from "vitest";
import type {
  ConformanceMessage,
  SessionConformanceOptions,
  SessionStoreFactory,
  SessionStoreUnderTest,
} from "./session-options.js";

/**
 * Makes the session stores of one test and releases every one (factory-made, reopened, other session)
 * after it, newest first.
 */
export class SessionFixture<P extends SessionStoreUnderTest> {
  private readonly instances: P[] = [];

  constructor(
    private readonly factory: SessionStoreFactory<P>,
    private readonly options: SessionConformanceOptions<P>,
  ) {}

  async create(): Promise<P> {
    return this.track(await this.factory());
  }

  async reopen(store: P): Promise<P> {
    if (!this.options.reopen) throw new Error("conformance: this check needs the `reopen` option");
    return this.track(await this.options.reopen(store));
  }

  async session(store: P, sessionId: string): Promise<P> {
    if (!this.options.session) throw new Error("conformance: this check needs the `session` option");
    return this.track(await this.options.session(store, sessionId));
  }

  async release(): Promise<void> {
    const instances = [...new Set(this.instances)].reverse();
    this.instances.length = 0;
    for (const instance of instances) await this.options.cleanup?.(instance);
  }

  private track(store: P): P {
    if (typeof store !== "object" || store === null) {
      throw new TypeError("conformance: the session store factory must return an object");
    }
    this.instances.push(store);
    return store;
  }
}

/** What every session group is given. */
export interface SessionSuite<P extends SessionStoreUnderTest> {
  factory: SessionStoreFactory<P>;
  options: SessionConformanceOptions<P>;
}

/** One group: a `describe` (or `describe.skip` when not supported) with a fixture released after each test. */
export function sessionGroup<P extends SessionStoreUnderTest>(
  title: string,
  suite: SessionSuite<P>,
  missing: string | null,
  body: (fixture: SessionFixture<P>, test: (title: string, run: () => Promise<void>) => void) => void,
): void {
  const register = missing === null ? describe : describe.skip;
  register(missing === null ? title : `${title} (${missing})`, () => {
    const fixture = new SessionFixture(suite.factory, suite.options);
    afterEach(() => fixture.release());
    body(fixture, (name, run) => it(name, run, suite.options.timeout));
  });
}

/** A one-text-part message. */
export function textMessage(id: string, text: string, role = "user"): ConformanceMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

/** The ids of messages, for comparisons. */
export function idsOf(messages: readonly { id: string }[]): string[] {
  return messages.map((message) => message.id);
}
