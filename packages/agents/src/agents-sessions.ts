import { ContextError, isContextError } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";
import type { SessionMessage } from "@contextblocks/sessions";
import {
  isSessionStoreV1,
  MessageTree,
  type SessionStore,
  type SessionStoreV1,
} from "@contextblocks/sessions/store-kit";
import type { SqlClient, SqlSource } from "@contextblocks/sql";
import { sqliteBackend } from "@contextblocks/sqlite";

/** One message as agents@0.32.0's `agents/sessions` stored it: the message, its parent, its time. */
export interface AgentsSessionsMessage {
  message: SessionMessage;
  parentId: string | null;
  createdAt: number;
}

/** One compaction overlay as agents@0.32.0 stored it. */
export interface AgentsSessionsCompaction {
  summary: string;
  fromMessageId: string;
  toMessageId: string;
  createdAt: number;
}

export interface ReadAgentsSessionsOptions {
  /** agents' session id (`sessions.session(id)`); default `""`, agents' primary session. */
  sessionId?: string | undefined;
  /**
   * `"inline"` (default): a media part offloaded by agents (`url: "attachment:sha256:…"`) gets its bytes back
   * as a `data:` URL, so the imported message stands alone. `"reference"`: the URL is left as agents wrote it.
   */
  attachments?: "inline" | "reference" | undefined;
}

const ATTACHMENT_PREFIX = "attachment:sha256:";

/**
 * Reads one session of agents@0.32.0's `agents/sessions` (tables `cf_agents_session_messages`, its
 * continuation rows in `cf_agents_session_message_chunks`, `cf_agents_session_compactions` and the media in
 * `cf_agents_session_attachment_*`) in write order. Read-only: agents' tables are left as they are.
 */
export async function readAgentsSessions(
  source: SqlSource,
  options: ReadAgentsSessionsOptions = {},
): Promise<{ messages: AgentsSessionsMessage[]; compactions: AgentsSessionsCompaction[] }> {
  const client = sqliteBackend(source).client;
  const sessionId = options.sessionId ?? "";
  if (!(await tableExists(client, "cf_agents_session_messages"))) return { messages: [], compactions: [] };
  const rows = await client.query<{
    id: string;
    parent_id: string | null;
    type: string;
    content: string;
    content_chunks: number;
    created_at: number;
  }>`SELECT id, parent_id, type, content, content_chunks, created_at FROM cf_agents_session_messages
     WHERE session_id = ${sessionId} ORDER BY seq ASC`;
  const continued = new Map<string, string>();
  if (rows.some((row) => Number(row.content_chunks) > 0)) {
    const chunks = await client.query<{ id: string; content: string }>`
      SELECT id, content FROM cf_agents_session_message_chunks WHERE session_id = ${sessionId} ORDER BY id ASC, idx ASC`;
    for (const chunk of chunks) continued.set(chunk.id, (continued.get(chunk.id) ?? "") + chunk.content);
  }
  const messages: AgentsSessionsMessage[] = [];
  for (const row of rows) {
    if (row.type !== "message") continue;
    const json = Number(row.content_chunks) === 0 ? row.content : row.content + (continued.get(row.id) ?? "");
    let message: SessionMessage;
    try {
      message = JSON.parse(json) as SessionMessage;
    } catch {
      throw new ContextError(
        "INVALID_INPUT",
        `readAgentsSessions: message "${clipped(row.id)}" of session "${clipped(sessionId)}" is not JSON (continuation rows missing?)`,
      );
    }
    if (options.attachments !== "reference") message = await inlineAttachments(client, message);
    messages.push({ message, parentId: row.parent_id ?? null, createdAt: Number(row.created_at) });
  }
  const compactions = (
    await client.query<{
      summary: string;
      from_message_id: string;
      to_message_id: string;
      created_at: number;
    }>`
      SELECT summary, from_message_id, to_message_id, created_at FROM cf_agents_session_compactions
      WHERE session_id = ${sessionId} ORDER BY seq ASC`
  ).map((row) => ({
    summary: row.summary,
    fromMessageId: row.from_message_id,
    toMessageId: row.to_message_id,
    createdAt: Number(row.created_at),
  }));
  return { messages, compactions };
}

/**
 * Brings one session of agents@0.32.0's `agents/sessions` into a contextblocks store (for example
 * `new SqliteSessionStore(ctx.storage, "chat")`, written through the message tree as a `Session` writes it,
 * or any `SessionStore`): every message under its parent (branches kept), then the compaction overlays. An
 * overlay whose range ends at an id that is not a message of the session (agents stored it and never showed it) is skipped
 * and counted in `skippedCompactions`. The store must not hold these message ids yet. agents' tables are not
 * changed.
 */
export async function importAgentsSessions(
  source: SqlSource,
  store: SessionStore | SessionStoreV1,
  options: ReadAgentsSessionsOptions = {},
): Promise<{ messages: number; compactions: number; skippedCompactions: number }> {
  const target = isSessionStoreV1(store) ? new MessageTree(store) : store;
  const { messages, compactions } = await readAgentsSessions(source, options);
  for (const { message, parentId } of messages) await target.appendMessage(message, parentId);
  let imported = 0;
  for (const overlay of compactions) {
    try {
      await target.addCompaction(overlay.summary, overlay.fromMessageId, overlay.toMessageId);
      imported++;
    } catch (error) {
      // agents stores any range and never shows one whose end is not the session's; contextblocks refuses it.
      if (!isContextError(error) || error.code !== "INVALID_INPUT") throw error;
    }
  }
  return {
    messages: messages.length,
    compactions: imported,
    skippedCompactions: compactions.length - imported,
  };
}

async function tableExists(client: SqlClient, name: string): Promise<boolean> {
  const rows = await client.query`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${name}`;
  return rows.length > 0;
}

async function inlineAttachments(client: SqlClient, message: SessionMessage): Promise<SessionMessage> {
  const parts = message.parts as unknown as Record<string, unknown>[];
  if (!parts.some((part) => typeof part.url === "string" && part.url.startsWith(ATTACHMENT_PREFIX)))
    return message;
  const inlined: Record<string, unknown>[] = [];
  for (const part of parts) {
    const url = part.url;
    if (typeof url !== "string" || !url.startsWith(ATTACHMENT_PREFIX)) {
      inlined.push(part);
      continue;
    }
    const hash = url.slice(ATTACHMENT_PREFIX.length);
    const [meta] = await client.query<{ media_type: string }>`
      SELECT media_type FROM cf_agents_session_attachment_meta WHERE hash = ${hash}`;
    const chunks = await client.query<{ data: unknown }>`
      SELECT data FROM cf_agents_session_attachment_chunks WHERE hash = ${hash} ORDER BY idx ASC`;
    if (meta === undefined) {
      inlined.push(part); // the bytes are gone: keep agents' reference
      continue;
    }
    const mediaType = typeof part.mediaType === "string" ? part.mediaType : meta.media_type;
    inlined.push({
      ...part,
      url: `data:${mediaType};base64,${base64(chunks.map((chunk) => bytesOf(chunk.data)))}`,
    });
  }
  return { ...message, parts: inlined as unknown as SessionMessage["parts"] };
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new ContextError("INVALID_INPUT", "readAgentsSessions: an attachment chunk is not bytes");
}

function base64(chunks: readonly Uint8Array[]): string {
  let binary = "";
  for (const chunk of chunks) {
    for (let start = 0; start < chunk.length; start += 0x8000) {
      binary += String.fromCharCode(...chunk.subarray(start, start + 0x8000));
    }
  }
  return btoa(binary);
}
