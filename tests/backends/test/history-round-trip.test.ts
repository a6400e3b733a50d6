import { type RunMessage, SessionHistoryPlugin, verbatimPartType } from "@contextblocks/ai";
import { SessionBuilder } from "@contextblocks/sessions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends, type OpenBackend } from "../src/backends.js";

/*
 * What the AI SDK adapter's history plugin stores reads back byte for byte after a restart, on each backend:
 * files, reasoning, provider-executed tools, error outputs, approvals, provider options.
 */

describe.each(backends)("SessionHistoryPlugin on $name: what is stored reads back exactly", (underTest) => {
  let opened: OpenBackend;
  beforeEach(async () => {
    opened = await underTest.open();
  });
  afterEach(() => opened.close());

  const bytes = new Uint8Array([137, 80, 78, 71, 0, 255]);
  const cases: Record<string, RunMessage[]> = {
    "text and files with provider options": [
      {
        role: "user",
        content: [
          {
            type: "text",
            text: "Look.",
            providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
          },
          { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=" },
          {
            type: "file",
            mediaType: "application/pdf",
            filename: "a.pdf",
            data: new URL("https://example.com/a.pdf"),
          },
        ],
        providerOptions: { openai: { user: "u-1" } },
      },
    ],
    "reasoning, a provider-executed tool and a client tool with its results": [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Thinking.", providerOptions: { anthropic: { signature: "sig" } } },
          {
            type: "tool-call",
            toolCallId: "s-1",
            toolName: "web_search",
            input: { q: "tea" },
            providerExecuted: true,
          },
          {
            type: "tool-result",
            toolCallId: "s-1",
            toolName: "web_search",
            output: { type: "json", value: [{ url: "u" }] },
          },
          { type: "text", text: "Found it." },
          { type: "tool-call", toolCallId: "c-1", toolName: "weather", input: { city: "Paris" } },
          { type: "tool-call", toolCallId: "c-2", toolName: "weather", input: { city: "Oslo" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c-1",
            toolName: "weather",
            output: { type: "text", value: "Sunny" },
          },
          {
            type: "tool-result",
            toolCallId: "c-2",
            toolName: "weather",
            output: { type: "json", value: "rain" },
          },
        ],
      },
    ],
    "error outputs": [
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "e-1", toolName: "fail", input: {} },
          { type: "tool-call", toolCallId: "e-2", toolName: "fail", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "e-1",
            toolName: "fail",
            output: { type: "error-text", value: "Error: no" },
          },
          {
            type: "tool-result",
            toolCallId: "e-2",
            toolName: "fail",
            output: { type: "error-json", value: { why: 1 } },
          },
        ],
      },
    ],
    "an approval response, stored as it was": [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "a-1", toolName: "pay", input: {} }] },
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap-1", approved: true }] },
      { role: "system", content: "Be brief." },
    ],
  };

  for (const [name, messages] of Object.entries(cases)) {
    it(name, async () => {
      const session = new SessionBuilder(opened.backend).forSession(name).build();
      await new SessionHistoryPlugin("history", { session }).saveMessages(name, messages);
      const reopened = new SessionBuilder(await opened.restart()).forSession(name).build();
      const loaded = await new SessionHistoryPlugin("history", { session: reopened }).getMessages(name);
      expect(JSON.stringify(loaded)).toBe(JSON.stringify(messages));
      // Only what the UI shape cannot hold (the approval) is stored verbatim.
      const verbatim = (await reopened.getHistory()).filter((message) =>
        message.parts.some((part) => part.type === verbatimPartType),
      );
      expect(verbatim.length).toBe(name.includes("approval") ? 1 : 0);
    });
  }

  it("gives bytes back as the same base64 a provider sends", async () => {
    const session = new SessionBuilder(opened.backend).forSession("bytes").build();
    const history = new SessionHistoryPlugin("history", { session });
    await history.saveMessages("bytes", [
      { role: "user", content: [{ type: "file", mediaType: "image/png", data: bytes }] },
    ]);
    const [message] = await history.getMessages("bytes");
    const part = message?.role === "user" ? message.content[0] : undefined;
    expect(part?.type === "file" ? part.data : null).toBe(Buffer.from(bytes).toString("base64"));
  });

  it("keeps tool calls in UI shape and only falls back to a verbatim part when it must", async () => {
    const session = new SessionBuilder(opened.backend).forSession("shape").build();
    const [, approvals] = Object.entries(cases).at(-1)!;
    await new SessionHistoryPlugin("history", { session }).saveMessages("shape", approvals);
    const types = (await session.getHistory()).map((message) => message.parts.map((part) => part.type));
    expect(types).toEqual([["tool-pay"], [verbatimPartType], ["text"]]);
  });
});
