/**
 * An assistant message of every kind of part a differential test stores besides text: a step start, a static
 * tool call with its output, a dynamic tool call still waiting for its output, and reasoning.
 */
export const toolPartsMessage = {
  id: "tool-1",
  role: "assistant",
  parts: [
    { type: "step-start" },
    {
      type: "tool-weather",
      toolCallId: "call-1",
      state: "output-available",
      input: { city: "Oslo" },
      output: { temp: 3 },
    },
    { type: "dynamic-tool", toolName: "x", toolCallId: "c2", state: "input-available", input: {} },
    { type: "reasoning", text: "hmm" },
  ],
};
