import { sessionSearchTool } from "@contextblocks/ai";
import { SessionManager as BaseSessionManager } from "@contextblocks/sessions";
import type { ToolSet } from "ai";
import { asyncResult } from "./async-result.js";
import { backendOf, type SessionSource } from "./backend.js";
import { Session } from "./session.js";

/**
 * Cloudflare agents' `SessionManager` on contextblocks. `new SessionManager(this)` / `SessionManager.create(this)`
 * take an Agent (or a backend); `getSession(id)` returns this package's `Session` (agents' methods, text tool
 * results). The registry methods that are synchronous in agents (`create`, `get`, `list`, `rename`,
 * `addUsage`, `search`) return promises here, because the same manager runs on Postgres: reading a property
 * of the promise without `await` throws an error that says so.
 */
export class SessionManager extends BaseSessionManager {
  constructor(source: SessionSource) {
    super(backendOf(source, "new SessionManager"));
  }

  static create(source: SessionSource): SessionManager {
    return new SessionManager(source);
  }

  protected override sessionClass(): typeof Session {
    return Session;
  }

  override getSession(sessionId: string): Session {
    return super.getSession(sessionId) as Session;
  }

  override create(...args: Parameters<BaseSessionManager["create"]>) {
    return asyncResult(super.create(...args), "SessionManager.create");
  }
  override get(...args: Parameters<BaseSessionManager["get"]>) {
    return asyncResult(super.get(...args), "SessionManager.get");
  }
  override list() {
    return asyncResult(super.list(), "SessionManager.list");
  }
  override rename(...args: Parameters<BaseSessionManager["rename"]>) {
    return asyncResult(super.rename(...args), "SessionManager.rename");
  }
  override addUsage(...args: Parameters<BaseSessionManager["addUsage"]>) {
    return asyncResult(super.addUsage(...args), "SessionManager.addUsage");
  }
  override search(...args: Parameters<BaseSessionManager["search"]>) {
    return asyncResult(super.search(...args), "SessionManager.search");
  }

  /**
   * Deletes the session and everything it owned, the blocks kept under agents' keys (`memory_chat-1`) and
   * their versions included: the session is resolved first, so the backend knows which labels it declared.
   */
  override async delete(sessionId: string): Promise<void> {
    void this.getSession(sessionId).context;
    await super.delete(sessionId);
  }

  /** agents' name: the number of messages on the session's active path. */
  getMessageCount(sessionId: string): Promise<number> {
    return this.getPathLength(sessionId);
  }

  /** agents' `session_search` tool over every session's messages (text results). */
  tools(): ToolSet {
    return sessionSearchTool(this);
  }
}
