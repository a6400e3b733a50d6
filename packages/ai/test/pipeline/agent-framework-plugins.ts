/**
 * Two custom context providers from Microsoft Agent Framework's samples, written as plugins against this
 * package's API. The code between the markers is the README's, character for character
 * (`readme-plugins.test.ts` checks it), so the README cannot drift.
 */
// README:begin
import type { CallContext, ContextPlugin, HistoryCall, HistoryPlugin, RunMessage } from "@contextblocks/ai";
import { messageText } from "@contextblocks/ai";

/** Remembers the user's favourite food from what they say, and tells the model on every later call. */
export class UserPreferencePlugin implements ContextPlugin {
  readonly sourceId = "user-preferences";

  beforeCall(run: CallContext): void {
    const favorite = run.state.favoriteFood;
    if (typeof favorite === "string") {
      run.extendInstructions(this.sourceId, `User's favorite food is ${favorite}.`);
    }
  }

  afterCall(run: CallContext): void {
    for (const message of run.inputMessages) {
      if (message.role !== "user") continue;
      const match = /favorite food is([^\n]*)/i.exec(messageText(message));
      if (match?.[1]) run.state.favoriteFood = match[1].trim().replace(/\.$/, "");
    }
  }
}

/** Any store of JSON rows by key: a SQL table, a KV namespace, a Durable Object. */
export interface MessageDatabase {
  loadMessages(key: string): Promise<string[]>;
  saveMessages(key: string, rows: string[]): Promise<void>;
}

/** The conversation in your own database; the key it uses is kept in the plugin's state. */
export class DatabaseHistoryPlugin implements HistoryPlugin {
  readonly sourceId = "db-history";
  readonly loadMessages = true;

  constructor(private readonly database: MessageDatabase) {}

  async getMessages(sessionId: string, { state }: HistoryCall): Promise<RunMessage[]> {
    const key = typeof state.historyKey === "string" ? state.historyKey : sessionId;
    const rows = await this.database.loadMessages(key);
    return rows.map((row) => JSON.parse(row) as RunMessage);
  }

  async saveMessages(sessionId: string, messages: readonly RunMessage[], { state }: HistoryCall) {
    if (messages.length === 0) return;
    state.historyKey ??= sessionId;
    await this.database.saveMessages(
      String(state.historyKey),
      messages.map((m) => JSON.stringify(m)),
    );
  }
}
// README:end
