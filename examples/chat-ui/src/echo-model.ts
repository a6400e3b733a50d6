import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";

/**
 * The offline model: it answers with what it was sent, so a run without an API key shows what the pipeline
 * gave the model (the stored history, never the client's copy of it): "Turn 3. You said: … Earlier: … / …".
 * Usage grows with the prompt, as a real model's does.
 */
export function echoModel(): LanguageModelV4 {
  const answer = (options: LanguageModelV4CallOptions) => {
    const said = options.prompt.filter((message) => message.role === "user").map(userText);
    const latest = said.at(-1) ?? "";
    const earlier = said.slice(0, -1);
    const text = `Turn ${said.length}. You said: ${latest}${earlier.length > 0 ? ` Earlier: ${earlier.join(" / ")}` : ""}`;
    const promptChars = JSON.stringify(options.prompt).length;
    const usage = {
      inputTokens: {
        total: Math.ceil(promptChars / 4),
        noCache: Math.ceil(promptChars / 4),
        cacheRead: 0,
        cacheWrite: 0,
      },
      outputTokens: { total: Math.ceil(text.length / 4), text: Math.ceil(text.length / 4), reasoning: 0 },
    };
    return { text, usage, finishReason: { unified: "stop" as const, raw: "stop" } };
  };
  return {
    specificationVersion: "v4",
    provider: "echo",
    modelId: "echo",
    supportedUrls: {},
    async doGenerate(options) {
      const { text, usage, finishReason } = answer(options);
      const content: LanguageModelV4Content[] = [{ type: "text", text }];
      return { content, usage, finishReason, warnings: [] };
    },
    async doStream(options) {
      const { text, usage, finishReason } = answer(options);
      const words = text.split(/(?<= )/);
      const parts: LanguageModelV4StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "answer" },
        ...words.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "answer", delta })),
        { type: "text-end", id: "answer" },
        { type: "finish", usage, finishReason },
      ];
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

function userText(message: LanguageModelV4CallOptions["prompt"][number]): string {
  if (message.role !== "user") return "";
  return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ");
}
