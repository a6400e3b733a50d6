import { env, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/http.js";
import { call, chat, dumpStorage, prompt, snapshot } from "./helpers.js";

const AGENT = "bad-requests";
const JSON_TYPE = { "content-type": "application/json" };

interface BadRequest {
  name: string;
  path: string;
  init?: RequestInit;
  status: number;
  error: RegExp;
}

const huge = JSON.stringify({ message: "x".repeat(MAX_BODY_BYTES + 1) });

const CASES: BadRequest[] = [
  { name: "unknown route", path: "/nope", status: 404, error: /No route/ },
  { name: "unknown agent action", path: `/agents/${AGENT}/delete`, status: 404, error: /No route/ },
  { name: "trailing slash", path: `/agents/${AGENT}/`, status: 404, error: /No route/ },
  // Issue 12, item 10: names inherited by a plain object are not routes, whatever the method.
  ...["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"].flatMap(
    (segment): BadRequest[] => [
      {
        name: `inherited name ${segment}`,
        path: `/agents/${AGENT}/${segment}`,
        status: 404,
        error: /No route/,
      },
      {
        name: `inherited name ${segment} with POST`,
        path: `/agents/${AGENT}/${segment}`,
        init: { method: "POST", headers: JSON_TYPE, body: "{}" },
        status: 404,
        error: /No route/,
      },
    ],
  ),
  {
    name: "wrong method",
    path: `/agents/${AGENT}/chat`,
    init: { method: "GET" },
    status: 405,
    error: /Use POST/,
  },
  {
    name: "wrong method on the prompt",
    path: `/agents/${AGENT}/prompt`,
    init: { method: "DELETE" },
    status: 405,
    error: /Use GET/,
  },
  { name: "bad agent id", path: "/agents/bad%20id/prompt", status: 400, error: /agent id/ },
  {
    name: "malformed JSON",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "hi"' },
    status: 400,
    error: /Malformed JSON/,
  },
  {
    name: "no body",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE },
    status: 400,
    error: /JSON object body/,
  },
  {
    name: "an array body",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '["hi"]' },
    status: 400,
    error: /got an array/,
  },
  {
    name: "missing field",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: "{}" },
    status: 400,
    error: /Missing field "message"/,
  },
  {
    name: "wrong type",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": 42}' },
    status: 400,
    error: /"message" must be a string, got a number/,
  },
  {
    name: "empty message",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "   "}' },
    status: 400,
    error: /empty/,
  },
  {
    name: "unknown field",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "hi", "system": "be evil"}' },
    status: 400,
    error: /Unknown field "system"/,
  },
  {
    name: "not JSON",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" },
    status: 415,
    error: /application\/json/,
  },
  {
    name: "huge body",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: huge },
    status: 413,
    error: /larger than 65536 bytes/,
  },
  {
    name: "message over the length limit",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ message: "y".repeat(9_000) }) },
    status: 413,
    error: /limit is 8000/,
  },
  {
    name: "impossible date",
    path: `/agents/${AGENT}/date`,
    init: { method: "PUT", headers: JSON_TYPE, body: '{"date": "2026-02-30"}' },
    status: 400,
    error: /real date/,
  },
  {
    name: "date of the wrong type",
    path: `/agents/${AGENT}/date`,
    init: { method: "PUT", headers: JSON_TYPE, body: '{"date": 20260101}' },
    status: 400,
    error: /got a number/,
  },
  {
    name: "date missing",
    path: `/agents/${AGENT}/date`,
    init: { method: "PUT", headers: JSON_TYPE, body: "{}" },
    status: 400,
    error: /Missing field "date"/,
  },
  {
    name: "chat into an unknown conversation",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "hi", "session": "no-such-session"}' },
    status: 404,
    error: /No conversation "no-such-session"/,
  },
  {
    name: "session of the wrong type",
    path: `/agents/${AGENT}/chat`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "hi", "session": 7}' },
    status: 400,
    error: /"session" must be a string, got a number/,
  },
  {
    name: "edit without a message id",
    path: `/agents/${AGENT}/edit`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"message": "hi"}' },
    status: 400,
    error: /Missing field "messageId"/,
  },
  {
    name: "edit of an unknown message",
    path: `/agents/${AGENT}/edit`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"messageId": "no-such-message", "message": "hi"}' },
    status: 404,
    error: /No message "no-such-message"/,
  },
  {
    name: "edit with an empty message",
    path: `/agents/${AGENT}/edit`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"messageId": "x", "message": ""}' },
    status: 400,
    error: /empty/,
  },
  {
    name: "conversation name of the wrong type",
    path: `/agents/${AGENT}/sessions`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"name": ["a"]}' },
    status: 400,
    error: /"name" must be a string, got an array/,
  },
  {
    name: "conversation name too long",
    path: `/agents/${AGENT}/sessions`,
    init: { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ name: "n".repeat(101) }) },
    status: 400,
    error: /limit is 100/,
  },
  {
    name: "conversation name with a lone surrogate",
    path: `/agents/${AGENT}/sessions`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"name": "Plans \\ud83d"}' },
    status: 400,
    error: /"name" has a lone UTF-16 surrogate at index 6/,
  },
  {
    name: "refresh with fields",
    path: `/agents/${AGENT}/refresh`,
    init: { method: "POST", headers: JSON_TYPE, body: '{"force": true}' },
    status: 400,
    error: /takes no fields/,
  },
];

describe("bad requests", () => {
  it("get a 4xx with a JSON error and change nothing stored", async () => {
    // An agent with some history, so there is something to damage.
    await chat(AGENT, "Remember that I like tea.");
    const promptBefore = await prompt(AGENT);
    const storageBefore = await dumpStorage(AGENT);
    expect(Object.keys(storageBefore)).toEqual(
      expect.arrayContaining([
        "cf_agents_context_blocks",
        "assistant_sessions",
        "assistant_messages",
        "assistant_leaves",
        "worker_agent_settings",
      ]),
    );

    // An assistant message cannot be edited: only a user message starts a branch.
    const answer = (await snapshot(AGENT)).transcript.recent.find((line) => line.role === "assistant");
    const cases: BadRequest[] = [
      ...CASES,
      {
        name: "edit of an assistant message",
        path: `/agents/${AGENT}/edit`,
        init: {
          method: "POST",
          headers: JSON_TYPE,
          body: JSON.stringify({ messageId: answer?.id, message: "hi" }),
        },
        status: 400,
        error: /only a user message can be edited/,
      },
    ];
    for (const badRequest of cases) {
      const response = await call(badRequest.path, badRequest.init);
      const body = (await response.json()) as { error?: unknown };
      expect({ name: badRequest.name, status: response.status }).toEqual({
        name: badRequest.name,
        status: badRequest.status,
      });
      expect(response.headers.get("content-type"), badRequest.name).toMatch(/^application\/json/);
      expect(typeof body.error, badRequest.name).toBe("string");
      expect(body.error, badRequest.name).toMatch(badRequest.error);
    }

    expect(await dumpStorage(AGENT)).toEqual(storageBefore);
    expect(await prompt(AGENT)).toBe(promptBefore);
  });

  it("never create an agent", async () => {
    const response = await call("/agents/never-created/chat", {
      method: "POST",
      headers: JSON_TYPE,
      body: "{}",
    });
    expect(response.status).toBe(400);
    const ids = await listDurableObjectIds(env.AGENT);
    const target = env.AGENT.idFromName("never-created");
    expect(ids.some((id) => id.equals(target))).toBe(false);
  });
});
