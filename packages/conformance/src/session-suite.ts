import { afterEach, describe, it } from "vitest";
import type {
  ConformanceMessage,
  SessionConformanceOptions,
  SessionProviderFactory,
  SessionProviderUnderTest,
} from "./session-options.js";

/**
 * Makes the session providers of one test and releases every one (factory-made, reopened, other session)
 * after it, newest first.
 */
export class SessionFixture<P extends SessionProviderUnderTest> {
  private readonly instances: P[] = [];

  constructor(
    private readonly factory: SessionProviderFactory<P>,
    private readonly options: SessionConformanceOptions<P>,
  ) {}

  async create(): Promise<P> {
    return this.track(await this.factory());
  }

  async reopen(provider: P): Promise<P> {
    if (!this.options.reopen) throw new Error("conformance: this check needs the `reopen` option");
    return this.track(await this.options.reopen(provider));
  }

  async session(provider: P, sessionId: string): Promise<P> {
    if (!this.options.session) throw new Error("conformance: this check needs the `session` option");
    return this.track(await this.options.session(provider, sessionId));
  }

  async release(): Promise<void> {
    const instances = [...new Set(this.instances)].reverse();
    this.instances.length = 0;
    for (const instance of instances) await this.options.cleanup?.(instance);
  }

  private track(provider: P): P {
    if (typeof provider !== "object" || provider === null) {
      throw new TypeError("conformance: the session provider factory must return an object");
    }
    this.instances.push(provider);
    return provider;
  }
}

/** What every session group is given. */
export interface SessionSuite<P extends SessionProviderUnderTest> {
  factory: SessionProviderFactory<P>;
  options: SessionConformanceOptions<P>;
}

/** One group: a `describe` (or `describe.skip` when not supported) with a fixture released after each test. */
export function sessionGroup<P extends SessionProviderUnderTest>(
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
