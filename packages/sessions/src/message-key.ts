/**
 * One key for a message in a search that may span sessions: its session's id and its own. The session id's
 * length comes first, so no two pairs share a key whatever characters the ids hold (a NUL among them: ids
 * joined by one aliased "a\0b" + "c" with "a" + "b\0c"). No session id counts as the default session, "".
 */
export function messageKeyOf(sessionId: string | undefined, id: string): string {
  const session = sessionId ?? "";
  return `${session.length}:${session}\u0000${id}`;
}
