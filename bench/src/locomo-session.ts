import { MessageTree, type SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import type { LocomoConversation } from "./locomo-data.js";

/**
 * A LoCoMo conversation appended to `store` as the retrieval benches ask it: every turn one message,
 * `"<speaker>: <text>"`, user and assistant in turns, stamped with its session's time when `times` holds it.
 * Returns the id each turn was given: the session id before the turn's, so ids stay unique across a
 * database's sessions (Postgres holds every conversation in one database).
 */
export async function appendConversation(
  store: SessionStoreV1,
  conversation: LocomoConversation,
  sessionId: string,
  times: ReadonlyMap<string, Date> | undefined,
): Promise<(turn: string) => string> {
  const idOf = (turn: string) => `${sessionId}:${turn}`;
  const tree = new MessageTree(store);
  let turns = 0;
  for (const turn of conversation.turns) {
    const time = times?.get(turn.dia_id);
    await tree.appendMessage({
      id: idOf(turn.dia_id),
      role: turns++ % 2 === 0 ? "user" : "assistant",
      parts: [{ type: "text", text: `${turn.speaker}: ${turn.text}` }],
      ...(time === undefined ? {} : { createdAt: time }),
    });
  }
  return idOf;
}
