/**
 * A `fetch` stub for the real provider packages: it records each request's JSON body and answers with a
 * canned response, so a test reads the HTTP body the provider built (where the breakpoints landed, the key,
 * the TTLs) rather than the options we handed it.
 */
export interface RecordedFetch {
  fetch: typeof globalThis.fetch;
  bodies: Array<Record<string, unknown>>;
}

export function recordingFetch(answer: (body: Record<string, unknown>) => unknown): RecordedFetch {
  const bodies: Array<Record<string, unknown>> = [];
  const fetch = (async (_url: unknown, init?: { body?: unknown }) => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    bodies.push(body);
    return new Response(JSON.stringify(answer(body)), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof globalThis.fetch;
  return { fetch, bodies };
}

/** Anthropic's Messages API answer: text, with the cache figures of its `usage`. */
export function anthropicAnswer(text: string, cache: { read: number; write: number }) {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 3,
      cache_creation_input_tokens: cache.write,
      cache_read_input_tokens: cache.read,
    },
  };
}

/** OpenAI's Responses API answer: text, with cache read and write tokens in `input_tokens_details`. */
export function openaiAnswer(text: string, model: string, cache: { read: number; write: number }) {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1_700_000_000,
    model,
    status: "completed",
    output: [
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: {
      input_tokens: 200,
      input_tokens_details: { cached_tokens: cache.read, cache_write_tokens: cache.write },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

/** Every place in a JSON body where `key` occurs, as a path (`messages.1.content.0`) and its value. */
export function findKey(value: unknown, key: string, path = ""): Array<[path: string, value: unknown]> {
  if (typeof value !== "object" || value === null) return [];
  const found: Array<[string, unknown]> = [];
  for (const [name, inner] of Object.entries(value)) {
    const at = path === "" ? name : `${path}.${name}`;
    if (name === key) found.push([path, inner]);
    found.push(...findKey(inner, key, at));
  }
  return found;
}
