import { ContextError } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";
import type { SqlClient } from "@contextblocks/sql";
import { SqliteContextProvider } from "./sqlite-context-provider.js";

/**
 * A named session's block on `sqliteBackend`: `SqliteContextProvider` under the session's namespace, which
 * will not read as empty when the database holds the block under the key Cloudflare agents' Sessions API
 * (agents@0.22.0) gave it (`memory_chat-1`). Served empty, the memory agents stored would vanish from the
 * prompt without a word; refused, the error names the entry that reads agents' keys. Costs one more read
 * (of a missing row) only while the block is empty, and none once it has content under contextblocks' key.
 */
export class SessionBlockProvider extends SqliteContextProvider {
  readonly #agentsRow: SqliteContextProvider;
  readonly #block: string;
  readonly #sessionId: string;

  constructor(client: SqlClient, label: string, sessionId: string) {
    super(client, { label, namespace: sessionId });
    this.#block = label;
    this.#sessionId = sessionId;
    this.#agentsRow = new SqliteContextProvider(client, { label: `${label}_${sessionId}`, versions: false });
  }

  override async get(): Promise<string | null> {
    const content = await super.get();
    if (content === null) this.#refuseIfWrittenByAgents(await this.#agentsRow.get());
    return content;
  }

  override getSync(): string | null | undefined {
    const content = super.getSync();
    if (content === null) this.#refuseIfWrittenByAgents(this.#agentsRow.getSync());
    return content;
  }

  #refuseIfWrittenByAgents(agentsContent: string | null | undefined): void {
    if (agentsContent === null || agentsContent === undefined) return;
    const key = `${this.#block}_${this.#sessionId}`;
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${clipped(this.#block)}" of session "${clipped(this.#sessionId)}" has no content under contextblocks' keys, but this database holds "${key}" (${agentsContent.length} characters), written by Cloudflare agents' Sessions API (agents@0.22.0). sqliteBackend would serve it as empty: open the database with agentsSqliteBackend(source) (or Session.create(this)) from @contextblocks/agents, which reads and writes agents' keys`,
      { label: this.#block },
    );
  }
}
